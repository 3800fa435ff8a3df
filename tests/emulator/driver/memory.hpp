// SPDX-License-Identifier: Apache-2.0
// The table of live allocations and the synchronous allocate/free paths. Device memory comes from
// the device's address space and counts against its capacity; managed and pinned host memory come
// from the host and count against nothing. VMM mappings (vmm.hpp) are entered here too.
#pragma once

#include "common.hpp"

#include <cstdint>
#include <mutex>

namespace rmm_emu {

class Device;
class Pool;

// The kind's bit in the control API is 1 << kind (RMM_EMU_KIND_*).
enum class MemKind { device, pool, managed, pinned, vmm };

// Memory only the device reaches (not host-accessible on a GPU).
constexpr bool device_only(MemKind k) { return k == MemKind::device || k == MemKind::pool || k == MemKind::vmm; }

struct Allocation {
  std::uint64_t base        = 0;
  std::uint64_t size        = 0;  // requested bytes: bounds checks and address ranges use it
  std::uint64_t span        = 0;  // bytes taken from the backing store
  MemKind kind              = MemKind::device;
  int device                = 0;
  Pool* pool                = nullptr;  // MemKind::pool only
  unsigned flags            = 0;        // cuMemHostAlloc / cuMemAllocManaged flags; VMM: the requested handle types
  bool mapped               = false;    // host backing came from mmap (else aligned_alloc)
  std::uint64_t buffer_id   = 0;
  std::uint64_t captured_in = 0;  // the capture sequence that allocated it (capture.hpp), 0: none
};

// Whether the host must not touch `a`: device-only kinds, except blocks of a managed memory pool.
bool device_only(Allocation const& a);

// Poison bytes: fresh device memory reads 0xCD, freed memory 0xDD (first MiB of each block).
inline constexpr unsigned char kFreshPoison = 0xCD;
inline constexpr unsigned char kFreedPoison = 0xDD;
inline constexpr std::uint64_t kPoisonLimit = 1 << 20;
void poison_fresh(std::uint64_t addr, std::uint64_t bytes);
void poison_freed(std::uint64_t addr, std::uint64_t bytes);  // also gives pages past the first MiB back

// One lock for the allocation table, device capacities, address spaces and pools.
std::mutex& memory_mutex();

// ---- callers hold memory_mutex() ----
Allocation* find_allocation(std::uint64_t addr);  // the live allocation containing addr
void insert_allocation(Allocation a);
void erase_allocation(std::uint64_t base);
Device* device_space_owner(std::uint64_t addr);  // device whose address range holds addr
// Takes `bytes` (a multiple of 512) of a device's memory, first giving back idle pool memory
// when the capacity would be exceeded; CUDA_ERROR_OUT_OF_MEMORY when it still does not fit.
CUresult take_device_memory(Device& dev, std::uint64_t bytes, std::uint64_t& addr);
void return_device_memory(Device& dev, std::uint64_t addr, std::uint64_t bytes);
// The same for capacity alone (cuMemCreate: physical memory without an address).
CUresult take_device_capacity(Device& dev, std::uint64_t bytes);
void return_device_capacity(Device& dev, std::uint64_t bytes);
std::uint64_t next_buffer_id();
// cuDevicePrimaryCtxReset: forgets every device, pool and managed allocation of `dev`, giving back
// device and managed memory (pool chunks are the pools' to give back).
void drop_device_allocations(Device& dev);

// ---- these lock ----
CUresult allocate_device(Device& dev, std::uint64_t bytes, CUdeviceptr* out);
CUresult allocate_managed(Device& dev, std::uint64_t bytes, unsigned flags, CUdeviceptr* out);
CUresult allocate_pinned(Device& dev, std::uint64_t bytes, unsigned flags, void** out);
// cuMemFree (host_api false: device, pool and managed memory) and cuMemFreeHost (pinned only).
// Waits for the owning device's streams first, like cudaFree.
CUresult free_sync(std::uint64_t ptr, bool host_api);

// What a copy or memset expects a pointer to be.
enum class Side { host, device, any };
struct RangeInfo {
  bool host = false;  // host memory: pinned, or memory CUDA does not know
  bool vmm  = false;  // VMM mappings: a queued operation re-checks them when it runs
};
// Validates [addr, addr + bytes) for reading or writing: device memory must be live and the range
// inside one allocation (or adjacent VMM mappings with access granted); a host-side pointer must
// not be device memory; a device-side pointer must be device-accessible (device, pool, VMM, managed
// or pinned memory; any host memory with pageable memory access). Addresses in a device's range or
// a VMM reservation that are not live are refused.
CUresult check_range(std::uint64_t addr, std::uint64_t bytes, Side side, bool write, RangeInfo* info = nullptr);

// Control API: live allocations of `device` (-1: all) whose kind bit is in `kinds`.
struct LiveStats {
  long long count = 0;
  long long bytes = 0;
};
LiveStats live_stats(int device, unsigned kinds);

}  // namespace rmm_emu
