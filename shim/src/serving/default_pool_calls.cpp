// SPDX-License-Identifier: Apache-2.0
#include "serving/default_pool_calls.hpp"

#include "serving/dispatch.hpp"
#include "settings.hpp"
#include "state.hpp"

#include <algorithm>

namespace rmm::shim {

pass_or_serve serve_pool_allocation(CUdeviceptr* out,
                                    std::size_t bytes,
                                    CUmemoryPool pool,
                                    CUstream stream,
                                    stream_flavour flavour)
{
  if (passing_through() || !settings().enabled || exiting()) { return {}; }
  if (!state().default_pools.served_device(pool)) { return {}; }
  return {serve_async_allocation(out, bytes, stream, flavour, pool_request::named_default), true};
}

namespace {

/// What `device`'s stack adds to its default pool's usage attribute, or nullopt for another
/// attribute.
std::optional<std::size_t> stack_part(shim_state& s, int device, CUmemPool_attribute attribute)
{
  // A paused stack holds no device memory: what it reserves and what its blocks use went back to
  // the device, as cudaMemGetInfo says (statistics() counts no reserve of a paused stack).
  auto const stats = s.stacks.statistics(device);  // nullopt: a stack without a sub-allocator
  auto live        = s.count.totals(device).live_bytes;
  for (std::size_t r = 0; r < max_regions; ++r) {
    auto const region = static_cast<region_id>(r);
    if (!s.stacks.paused(device, region)) { continue; }
    auto const paused = s.stacks.statistics(device, region);
    live -= std::min(live, paused ? paused->allocated_bytes : live);
  }
  switch (attribute) {
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: return stats ? stats->reserved_bytes : live;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      return stats ? s.default_pools.reserved_high(device, stats->peak_reserved_bytes, stats->reserved_bytes)
                   : s.count.peak_live_since_reset(device);
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: return live;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: return s.count.peak_live_since_reset(device);
    default: return std::nullopt;
  }
}

}  // namespace

void adjust_pool_attribute(CUmemoryPool pool, CUmemPool_attribute attribute, void* value) noexcept
{
  if (value == nullptr || passing_through() || !settings().enabled || exiting()) { return; }
  auto& s           = state();
  auto const device = s.default_pools.device_with_stack(pool, s.stacks);
  if (!device) { return; }
  try {
    if (auto const part = stack_part(s, *device, attribute)) { *static_cast<cuuint64_t*>(value) += *part; }
  } catch (...) {  // statistics only lock; leave the driver's answer alone if that ever fails
  }
}

void note_pool_attribute_set(CUmemoryPool pool, CUmemPool_attribute attribute) noexcept
{
  if (passing_through() || !settings().enabled || exiting()) { return; }
  auto& s           = state();
  auto const device = s.default_pools.device_with_stack(pool, s.stacks);
  if (!device) { return; }
  try {
    if (attribute == CU_MEMPOOL_ATTR_USED_MEM_HIGH) { s.count.reset_peak_since(*device); }
    if (attribute == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) {
      auto const stats = s.stacks.statistics(*device);
      if (stats) { s.default_pools.reset_reserved_high(*device, stats->reserved_bytes); }
      s.count.reset_peak_since(*device);  // a stack without a sub-allocator reports live bytes
    }
  } catch (...) {
  }
}

void trim_default_pool(CUmemoryPool pool, std::size_t keep) noexcept
{
  if (passing_through() || !settings().enabled || exiting()) { return; }
  auto& s           = state();
  auto const device = s.default_pools.device_with_stack(pool, s.stacks);
  if (!device) { return; }
  try {
    auto const stats = s.stacks.statistics(*device);
    if (stats && stats->reserved_bytes > keep) { (void)release_free_memory(*device); }
  } catch (...) {
  }
}

}  // namespace rmm::shim
