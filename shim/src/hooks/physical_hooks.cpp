// SPDX-License-Identifier: Apache-2.0
// The wrappers of the program's own physical memory (CUDA's virtual memory management): its
// allocations are not served by the stacks, but those it releases are kept in the physical cache
// (physical_cache.hpp) and handed out again; everything that can keep an allocation's memory
// reachable (mappings, retained references, exports, multicast bindings) is followed so that
// nothing still reachable is ever handed out.

#include "driver/wrappers.hpp"

#include "serving/dispatch.hpp"
#include "driver/real_driver.hpp"
#include "settings.hpp"
#include "state.hpp"
#include "visibility.hpp"

namespace {

using rmm::shim::pass_through;
using rmm::shim::physical_call;
using rmm::shim::real;

rmm::shim::physical_cache& cache() noexcept { return rmm::shim::state().physical; }

/// The cache, when the program's physical allocations are followed; nothing when the setting is off.
rmm::shim::physical_cache* followed() noexcept { return rmm::shim::following_physical_memory() ? &cache() : nullptr; }

/// Whether `h` is a handle the program released and nothing maps: natively the driver destroyed it
/// and refuses it, but the cache keeps it alive, so a call on it would succeed. Refused here
/// instead, so that a kept handle is never mapped or exported behind the cache's back.
bool gone(CUmemGenericAllocationHandle h) noexcept
{
  auto* c = followed();
  try {
    return c != nullptr && !rmm::shim::passing_through() && c->gone(h);
  } catch (...) {  // its lock failed: let the driver answer
    return false;
  }
}

/// After an unmapping: the released handles that escaped while mapped go back to the driver, as
/// the program's release asked.
void release_escaped(std::vector<CUmemGenericAllocationHandle> const& handles) noexcept
{
  if (auto const release = real()->mem_release; release != nullptr) {
    for (auto const h : handles) { (void)release(h); }
  }
}

/// Gives the driver back the kept allocations no cuMemCreate asked for in a long while.
void release_expired(PFN_cuMemRelease_v10020 release) noexcept
{
  try {
    for (auto const& stale : cache().expired()) { (void)release(stale.owner); }
  } catch (...) {  // no memory for the list: they stay kept, and expire at a later call
  }
}

}  // namespace

RMM_SHIM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle,
                                     std::size_t bytes,
                                     CUmemAllocationProp const* prop,
                                     unsigned long long flags)
{
  auto const create = real()->mem_create;
  if (create == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto const caching = handle != nullptr && prop != nullptr && rmm::shim::caching_physical_memory();
  if (caching) {
    auto const cached = cache().take(bytes, *prop, flags);
    if (real()->mem_release != nullptr) { release_expired(real()->mem_release); }
    if (cached) {
      *handle = *cached;
      rmm::shim::note_physical_allocation_call(physical_call::create, 0);
      rmm::shim::note_passed_by(rmm::shim::pass_reason::virtual_memory, bytes);
      return CUDA_SUCCESS;
    }
  }
  auto result = rmm::shim::timed_physical_allocation_call(physical_call::create, bytes,
                                                          [&] { return create(handle, bytes, prop, flags); });
  if (result == CUDA_ERROR_OUT_OF_MEMORY && caching && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
      rmm::shim::release_cached_physical_memory(prop->location.id) > 0) {
    // The device's memory sat in released allocations of other sizes: try again without them.
    result = rmm::shim::timed_physical_allocation_call(physical_call::create, bytes,
                                                       [&] { return create(handle, bytes, prop, flags); });
  }
  if (result == CUDA_SUCCESS && caching) { cache().created(*handle, bytes, *prop); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
  auto const release = real()->mem_release;
  if (release == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  if (auto* c = followed(); c != nullptr && !rmm::shim::passing_through()) {
    switch (c->released(handle)) {
      case rmm::shim::physical_cache::release_action::keep:
        rmm::shim::note_physical_allocation_call(physical_call::release, 0);
        return CUDA_SUCCESS;
      case rmm::shim::physical_cache::release_action::refuse: return CUDA_ERROR_INVALID_VALUE;
      case rmm::shim::physical_cache::release_action::forward: break;
    }
  }
  return rmm::shim::timed_physical_allocation_call(physical_call::release, 0, [&] { return release(handle); });
}

RMM_SHIM_EXPORT CUresult cuMemMap(CUdeviceptr ptr,
                                  std::size_t size,
                                  std::size_t offset,
                                  CUmemGenericAllocationHandle handle,
                                  unsigned long long flags)
{
  auto const map = real()->mem_map;
  if (map == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  if (gone(handle)) { return CUDA_ERROR_INVALID_VALUE; }
  auto const result = pass_through([&] { return map(ptr, size, offset, handle, flags); });
  if (auto* c = followed(); c != nullptr && result == CUDA_SUCCESS) { c->mapped(ptr, size, handle); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, std::size_t size)
{
  auto const unmap = real()->mem_unmap;
  if (unmap == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto const result = pass_through([&] { return unmap(ptr, size); });
  if (auto* c = followed(); c != nullptr && result == CUDA_SUCCESS) { release_escaped(c->unmapped(ptr, size)); }
  return result;
}

// Freeing a reservation unmaps whatever is still mapped in it.
RMM_SHIM_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, std::size_t size)
{
  auto const address_free = real()->mem_address_free;
  if (address_free == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto const result = pass_through([&] { return address_free(ptr, size); });
  if (auto* c = followed(); c != nullptr && result == CUDA_SUCCESS) { release_escaped(c->unmapped(ptr, size)); }
  return result;
}

// Memory of a native cudaMalloc has no allocation handle; a block of a pool has the pool's, which
// would hand out (and let a program export or unmap) the whole pool's memory.
RMM_SHIM_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr)
{
  if (rmm::shim::is_served_memory(reinterpret_cast<CUdeviceptr>(addr))) { return CUDA_ERROR_INVALID_VALUE; }
  auto const retain = real()->mem_retain_allocation_handle;
  if (retain == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto const result = pass_through([&] { return retain(handle, addr); });
  if (auto* c = followed(); c != nullptr && result == CUDA_SUCCESS && handle != nullptr) { c->retained(*handle); }
  return result;
}

// Another process may hold an exported allocation's memory for as long as it likes.
RMM_SHIM_EXPORT CUresult cuMemExportToShareableHandle(void* shareable,
                                                      CUmemGenericAllocationHandle handle,
                                                      CUmemAllocationHandleType type,
                                                      unsigned long long flags)
{
  auto const export_handle = real()->mem_export_to_shareable_handle;
  if (export_handle == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  if (gone(handle)) { return CUDA_ERROR_INVALID_VALUE; }
  if (auto* c = followed()) { c->escaped(handle); }  // before: another process may import it at once
  return pass_through([&] { return export_handle(shareable, handle, type, flags); });
}

// A multicast object keeps the memory bound to it until it is unbound, which is not followed.
RMM_SHIM_EXPORT CUresult cuMulticastBindMem(CUmemGenericAllocationHandle multicast,
                                            std::size_t multicast_offset,
                                            CUmemGenericAllocationHandle handle,
                                            std::size_t offset,
                                            std::size_t size,
                                            unsigned long long flags)
{
  auto const bind = real()->multicast_bind_mem;
  if (bind == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  if (gone(handle)) { return CUDA_ERROR_INVALID_VALUE; }
  if (auto* c = followed()) { c->escaped(handle); }
  return pass_through([&] { return bind(multicast, multicast_offset, handle, offset, size, flags); });
}

RMM_SHIM_EXPORT CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle multicast,
                                             std::size_t multicast_offset,
                                             CUdeviceptr address,
                                             std::size_t size,
                                             unsigned long long flags)
{
  auto const bind = real()->multicast_bind_addr;
  if (bind == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  if (auto* c = followed()) {
    for (std::size_t at = 0; at < size;) {  // each allocation mapped in the range
      auto const mapped = c->mapped_at(address + at);
      if (!mapped) { break; }
      c->escaped(mapped->owner);
      at = mapped->end - address;
    }
  }
  return pass_through([&] { return bind(multicast, multicast_offset, address, size, flags); });
}
