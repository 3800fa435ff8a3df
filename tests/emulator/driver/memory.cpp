// SPDX-License-Identifier: Apache-2.0
#include "memory.hpp"
#include "prefetch_locations.hpp"

#include "address_space.hpp"
#include "config.hpp"
#include "context.hpp"
#include "device.hpp"
#include "mempool.hpp"
#include "state.hpp"
#include "stream.hpp"
#include "vmm.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>

namespace rmm_emu {
namespace {

std::map<std::uint64_t, Allocation>& table()
{
  static auto* t = new std::map<std::uint64_t, Allocation>;  // never destroyed (see settings())
  return *t;
}

std::atomic<std::uint64_t> g_buffer_ids{1};

// Host allocations fail beyond physical memory: a 1 PiB cudaMallocHost fails as on real CUDA.
std::uint64_t host_limit()
{
  static std::uint64_t const limit =
    static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return limit;
}

constexpr std::uint64_t kMmapThreshold = 64 * KiB;

// Managed and pinned memory: mmap for large blocks (free until touched), aligned_alloc otherwise.
void* host_backing(std::uint64_t bytes, std::uint64_t& span, bool& mapped)
{
  if (bytes >= kMmapThreshold) {
    span    = round_up(bytes, 4 * KiB);
    void* p = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    mapped  = true;
    return p == MAP_FAILED ? nullptr : p;
  }
  span   = round_up(bytes, 256);
  mapped = false;
  return std::aligned_alloc(256, span);
}

void release_host_backing(Allocation const& a)
{
  if (a.mapped) {
    ::munmap(reinterpret_cast<void*>(a.base), a.span);
  } else {
    std::free(reinterpret_cast<void*>(a.base));
  }
}

}  // namespace

std::mutex& memory_mutex()
{
  static auto* m = new std::mutex;
  return *m;
}

void poison_fresh(std::uint64_t addr, std::uint64_t bytes)
{
  std::memset(reinterpret_cast<void*>(addr), kFreshPoison, std::min(bytes, kPoisonLimit));
}

void poison_freed(std::uint64_t addr, std::uint64_t bytes)
{
  std::memset(reinterpret_cast<void*>(addr), kFreedPoison, std::min(bytes, kPoisonLimit));
  if (bytes > kPoisonLimit) { AddressSpace::discard(addr + kPoisonLimit, bytes - kPoisonLimit); }
}

Allocation* find_allocation(std::uint64_t addr)
{
  auto& t = table();
  auto it = t.upper_bound(addr);
  if (it == t.begin()) { return nullptr; }
  --it;
  Allocation& a = it->second;
  return addr < a.base + a.size ? &a : nullptr;
}

void insert_allocation(Allocation a) { table()[a.base] = a; }

void erase_allocation(std::uint64_t base)
{
  auto& t = table();
  if (auto it = t.find(base); it != t.end()) {
    forget_prefetches(base, it->second.size);
    t.erase(it);
  }
}

Device* device_space_owner(std::uint64_t addr)
{
  for (int i = 0; i < device_count(); ++i) {
    if (device(i)->space.contains(addr)) { return device(i); }
  }
  return nullptr;
}

CUresult take_device_memory(Device& dev, std::uint64_t bytes, std::uint64_t& addr)
{
  if (bytes > dev.capacity()) { return CUDA_ERROR_OUT_OF_MEMORY; }
  if (dev.used + bytes > dev.capacity()) { release_idle_pool_memory(dev); }
  if (dev.used + bytes > dev.capacity()) { return CUDA_ERROR_OUT_OF_MEMORY; }
  auto a = dev.space.allocate(bytes);
  if (!a) {
    release_idle_pool_memory(dev);
    a = dev.space.allocate(bytes);
    if (!a) { return CUDA_ERROR_OUT_OF_MEMORY; }
  }
  dev.used += bytes;
  addr = *a;
  return CUDA_SUCCESS;
}

void return_device_memory(Device& dev, std::uint64_t addr, std::uint64_t bytes)
{
  dev.space.release(addr, bytes);
  dev.used -= bytes;
}

CUresult take_device_capacity(Device& dev, std::uint64_t bytes)
{
  if (bytes > dev.capacity()) { return CUDA_ERROR_OUT_OF_MEMORY; }
  if (dev.used + bytes > dev.capacity()) { release_idle_pool_memory(dev); }
  if (dev.used + bytes > dev.capacity()) { return CUDA_ERROR_OUT_OF_MEMORY; }
  dev.used += bytes;
  return CUDA_SUCCESS;
}

void return_device_capacity(Device& dev, std::uint64_t bytes) { dev.used -= bytes; }

std::uint64_t next_buffer_id() { return g_buffer_ids.fetch_add(1); }

void drop_device_allocations(Device& dev)
{
  std::erase_if(table(), [&](auto const& entry) {
    Allocation const& a = entry.second;
    if (a.device != dev.ordinal()) { return false; }
    switch (a.kind) {
      case MemKind::device:
        poison_freed(a.base, a.size);
        return_device_memory(dev, a.base, a.span);
        return true;
      case MemKind::pool: return true;
      case MemKind::managed: release_host_backing(a); return true;
      case MemKind::pinned: return false;  // pinned host memory outlives the device reset here
      case MemKind::vmm: return false;     // so do VMM mappings (cuMemUnmap / cuMemAddressFree own them)
    }
    return false;
  });
}

CUresult allocate_device(Device& dev, std::uint64_t bytes, CUdeviceptr* out)
{
  if (inject_allocation_failure(bytes)) { return CUDA_ERROR_OUT_OF_MEMORY; }
  if (bytes > dev.capacity()) { return CUDA_ERROR_OUT_OF_MEMORY; }
  std::uint64_t const span = round_up(bytes, AddressSpace::kGranularity);
  std::lock_guard lock(memory_mutex());
  std::uint64_t addr = 0;
  if (auto r = take_device_memory(dev, span, addr); r != CUDA_SUCCESS) { return r; }
  poison_fresh(addr, bytes);
  insert_allocation({addr, bytes, span, MemKind::device, dev.ordinal(), nullptr, 0, false, next_buffer_id()});
  *out = addr;
  return CUDA_SUCCESS;
}

CUresult allocate_managed(Device& dev, std::uint64_t bytes, unsigned flags, CUdeviceptr* out)
{
  if (inject_allocation_failure(bytes) || bytes > host_limit()) { return CUDA_ERROR_OUT_OF_MEMORY; }
  std::uint64_t span = 0;
  bool mapped        = false;
  void* p            = host_backing(bytes, span, mapped);
  if (p == nullptr) { return CUDA_ERROR_OUT_OF_MEMORY; }
  auto const addr = reinterpret_cast<std::uint64_t>(p);
  poison_fresh(addr, bytes);
  std::lock_guard lock(memory_mutex());
  insert_allocation({addr, bytes, span, MemKind::managed, dev.ordinal(), nullptr, flags, mapped, next_buffer_id()});
  *out = addr;
  return CUDA_SUCCESS;
}

CUresult allocate_pinned(Device& dev, std::uint64_t bytes, unsigned flags, void** out)
{
  if (inject_allocation_failure(bytes) || bytes > host_limit()) { return CUDA_ERROR_OUT_OF_MEMORY; }
  std::uint64_t span = 0;
  bool mapped        = false;
  void* p            = host_backing(bytes, span, mapped);
  if (p == nullptr) { return CUDA_ERROR_OUT_OF_MEMORY; }
  auto const addr = reinterpret_cast<std::uint64_t>(p);
  poison_fresh(addr, bytes);
  std::lock_guard lock(memory_mutex());
  insert_allocation({addr, bytes, span, MemKind::pinned, dev.ordinal(), nullptr, flags, mapped, next_buffer_id()});
  *out = p;
  return CUDA_SUCCESS;
}

CUresult free_sync(std::uint64_t ptr, bool host_api)
{
  if (ptr == 0) { return CUDA_SUCCESS; }
  auto const valid = [&](Allocation const* a) {
    // VMM mappings are not cudaFree's (INVALID_VALUE, as on a GPU).
    return a != nullptr && a->base == ptr && a->kind != MemKind::vmm && host_api == (a->kind == MemKind::pinned);
  };
  Device* dev = nullptr;
  {
    std::lock_guard lock(memory_mutex());
    Allocation const* a = find_allocation(ptr);
    if (!valid(a)) { return CUDA_ERROR_INVALID_VALUE; }
    dev = device(a->device);
  }
  // cudaFree implies device synchronization: nothing still queued may touch the block afterwards.
  if (on_stream_worker()) { return CUDA_ERROR_NOT_PERMITTED; }
  dev->primary().synchronize();
  {
    std::lock_guard lock(memory_mutex());
    Allocation* a = find_allocation(ptr);
    if (!valid(a)) { return CUDA_ERROR_INVALID_VALUE; }  // a concurrent free won the race
    Allocation const copy = *a;
    erase_allocation(ptr);
    switch (copy.kind) {
      case MemKind::device:
        poison_freed(copy.base, copy.size);
        return_device_memory(*dev, copy.base, copy.span);
        break;
      case MemKind::pool: copy.pool->free_now(copy.base, copy.size); break;
      case MemKind::managed:
      case MemKind::pinned: release_host_backing(copy); break;
      case MemKind::vmm: break;  // refused above
    }
  }
  trim_pools_at_sync(*dev);
  return CUDA_SUCCESS;
}

bool device_only(Allocation const& a)
{
  if (a.kind == MemKind::pool && a.pool->managed()) { return false; }
  return device_only(a.kind);
}

CUresult check_range(std::uint64_t addr, std::uint64_t bytes, Side side, bool write, RangeInfo* info)
{
  RangeInfo ignored;
  RangeInfo& out = info != nullptr ? *info : ignored;
  out            = RangeInfo{};
  if (bytes == 0) { return CUDA_SUCCESS; }
  if (addr == 0 || addr + bytes < addr) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  if (Allocation const* a = find_allocation(addr); a != nullptr) {
    out.host = a->kind == MemKind::pinned;
    if (device_only(*a) && side == Side::host) { return CUDA_ERROR_INVALID_VALUE; }
    if (a->kind == MemKind::vmm) {
      out.vmm = true;
      return vmm_check_span(addr, bytes, write);
    }
    if (addr + bytes > a->base + a->size) { return CUDA_ERROR_INVALID_VALUE; }
    return CUDA_SUCCESS;
  }
  // With sticky faults on, reserved VMM addresses are accepted as a kernel's access is: the work
  // faults when it runs on what is unmapped then.
  if (settings().sticky_faults.load() != 0 && side == Side::device && vmm_reserved(addr)) {
    out.vmm = true;
    return CUDA_SUCCESS;
  }
  // Inside a device's address range but not live: freed or never allocated device memory. Likewise
  // reserved but unmapped VMM addresses.
  if (device_space_owner(addr) != nullptr || vmm_reserved(addr)) { return CUDA_ERROR_INVALID_VALUE; }
  out.host = true;
  // With pageable memory access (HMM) the device reaches any host memory.
  bool const device_reachable = settings().pageable_memory_access.load() != 0;
  return side == Side::device && !device_reachable ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

LiveStats live_stats(int device, unsigned kinds)
{
  LiveStats s;
  std::lock_guard lock(memory_mutex());
  for (auto const& [base, a] : table()) {
    if (a.kind == MemKind::vmm) { continue; }  // mappings: their physical allocations count below
    if (device >= 0 && a.device != device) { continue; }
    if ((kinds & (1u << static_cast<unsigned>(a.kind))) == 0) { continue; }
    ++s.count;
    s.bytes += static_cast<long long>(a.size);
  }
  if ((kinds & (1u << static_cast<unsigned>(MemKind::vmm))) != 0) { vmm_live_stats(device, s); }
  return s;
}

}  // namespace rmm_emu
