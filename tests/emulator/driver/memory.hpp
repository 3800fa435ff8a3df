// The table of live allocations and the synchronous allocate/free paths. Device memory comes from
// the device's address space and counts against its capacity; managed and pinned host memory come
// from the host and count against nothing.
#pragma once

#include "common.hpp"

#include <cstdint>
#include <mutex>

namespace rmm_emu {

class Device;
class Pool;

enum class MemKind { device, pool, managed, pinned };

struct Allocation {
  std::uint64_t base = 0;
  std::uint64_t size = 0;  // requested bytes: bounds checks and address ranges use it
  std::uint64_t span = 0;  // bytes taken from the backing store
  MemKind kind = MemKind::device;
  int device = 0;
  Pool* pool = nullptr;    // MemKind::pool only
  unsigned flags = 0;      // cuMemHostAlloc / cuMemAllocManaged flags
  bool mapped = false;     // host backing came from mmap (else aligned_alloc)
  std::uint64_t buffer_id = 0;
};

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
// Validates [addr, addr + bytes): device memory must be live and the range inside one allocation;
// a host-side pointer must not be device memory; a device-side pointer must be device-accessible
// (device, pool, managed or pinned memory; any host memory with pageable memory access). `host` (optional) tells whether the range is host
// memory: pinned, or memory CUDA does not know.
CUresult check_range(std::uint64_t addr, std::uint64_t bytes, Side side, bool* host = nullptr);

// Control API: live allocations of `device` (-1: all) whose kind bit is in `kinds`.
struct LiveStats {
  long long count = 0;
  long long bytes = 0;
};
LiveStats live_stats(int device, unsigned kinds);

}  // namespace rmm_emu
