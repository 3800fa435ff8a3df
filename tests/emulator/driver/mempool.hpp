// SPDX-License-Identifier: Apache-2.0
// Stream-ordered memory pools (cuMemAllocAsync / cuMemAllocFromPoolAsync / cuMemFreeAsync).
//
// A pool reserves device memory in chunks (at least 32 MiB, multiples of 2 MiB, as the H200 does)
// and sub-allocates them in 512-byte units. A block freed with cuMemFreeAsync(ptr, s) is "pending"
// until stream s reaches the free: allocations on s may reuse it at once (stream order protects
// them), other streams only once s got there. At synchronization points the pool gives idle chunks
// back until its reservation is at most the release threshold.
#pragma once

#include "common.hpp"
#include "stream.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace rmm_emu {

class Device;

class Pool {
 public:
  Pool(Device& dev, CUmemPoolProps const& props, bool is_default);
  Pool(Pool const&)            = delete;
  Pool& operator=(Pool const&) = delete;

  Device& device() const { return dev_; }
  CUmemoryPool handle() { return reinterpret_cast<CUmemoryPool>(this); }
  CUmemPoolProps const& props() const { return props_; }
  bool is_default() const { return is_default_; }
  // Stream-ordered managed memory (CUDA 13): its blocks are host-accessible.
  bool managed() const { return props_.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED; }

  // ---- callers hold memory_mutex() ----
  CUresult allocate(std::uint64_t bytes, Stream const& stream, std::uint64_t& addr);
  // `bytes` is the size the block was allocated with (UsedMemCurrent counts requested bytes).
  void free_deferred(std::uint64_t addr, std::uint64_t bytes, StreamPos at);  // reusable once `at` is reached
  void free_now(std::uint64_t addr, std::uint64_t bytes);  // cuMemFree on pool memory, after a device sync
  // Gives idle chunks back while more than `keep` bytes are reserved; returns the bytes released.
  std::uint64_t release(std::uint64_t keep);
  bool holds_memory() const { return !chunks_.empty(); }
  // Device reset: every chunk goes back, live blocks or not; counters and attributes restart.
  void drop_all();

  CUresult get_attribute(CUmemPool_attribute attr, void* value) const;
  CUresult set_attribute(CUmemPool_attribute attr, void const* value);

  bool destroyed = false;
  std::map<int, CUmemAccess_flags> access;  // cuMemPoolSetAccess, by device ordinal

  std::uint64_t release_threshold = 0;

 private:
  struct Block {
    std::uint64_t size = 0;
    bool free          = true;
    StreamPos pending;  // set while a stream-ordered free has not been reached
  };
  struct Chunk {
    std::uint64_t base = 0;
    std::uint64_t size = 0;
    std::map<std::uint64_t, Block> blocks;  // by address, covering the chunk
  };

  static void settle(Chunk& c);  // reached frees become plain free blocks; free neighbours merge
  static bool idle(Chunk& c);    // nothing live or pending
  Chunk* chunk_of(std::uint64_t addr);
  CUresult grow(std::uint64_t bytes);

  Device& dev_;
  CUmemPoolProps props_;
  bool const is_default_;
  int reuse_follow_event_dependencies_   = 1;
  int reuse_allow_opportunistic_         = 1;
  int reuse_allow_internal_dependencies_ = 1;
  std::uint64_t used_                    = 0;
  std::uint64_t used_high_               = 0;
  std::uint64_t reserved_                = 0;
  std::uint64_t reserved_high_           = 0;
  std::vector<std::unique_ptr<Chunk>> chunks_;
};

// Handle validation: pools register themselves when built; destroyed ones are not found.
// Caller holds memory_mutex().
Pool* lookup_pool(CUmemoryPool handle);

// ---- callers hold memory_mutex() ----
// Gives back every idle chunk of the device's pools, whatever their thresholds (memory pressure).
void release_idle_pool_memory(Device& dev);
// Device reset: user pools are destroyed outright, the default pool starts afresh.
void drop_device_pools(Device& dev);
// Destroys `p` (a user pool): gives back what it can; frees the object once it holds nothing.
void retire_pool(Pool* p);

// Synchronization point on `dev` (locks): pools give back memory above their release thresholds,
// destroyed pools everything they can.
void trim_pools_at_sync(Device& dev);

}  // namespace rmm_emu
