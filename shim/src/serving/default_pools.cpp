// SPDX-License-Identifier: Apache-2.0
#include "serving/default_pools.hpp"

#include "serving/contexts.hpp"
#include "serving/dispatch.hpp"
#include "hooks/real_driver.hpp"
#include "settings.hpp"
#include "state.hpp"

#include <algorithm>

namespace rmm::shim {

CUmemoryPool default_pool_table::pool_of(int device) noexcept
{
  auto& slot = pools_[static_cast<std::size_t>(device)];
  if (auto const pool = slot.load(std::memory_order_acquire); pool != nullptr) [[likely]] { return pool; }
  CUmemoryPool pool{};
  if (real()->device_get_default_mem_pool(&pool, device) != CUDA_SUCCESS) { return nullptr; }
  slot.store(pool, std::memory_order_release);  // the same handle whoever finds it first
  return pool;
}

std::optional<int> default_pool_table::served_device(CUmemoryPool pool) noexcept
{
  auto const device = current_primary_device();
  if (!device || pool == nullptr || pool_of(*device) != pool) { return std::nullopt; }
  return device;
}

std::optional<int> default_pool_table::device_with_stack(CUmemoryPool pool) noexcept
{
  if (pool == nullptr) { return std::nullopt; }
  auto const& stacks = state().stacks;
  for (int device = 0; device < max_devices; ++device) {
    if (stacks.any(device) && pool_of(device) == pool) { return device; }
  }
  return std::nullopt;
}

void default_pool_table::reset_reserved_high(int device, std::size_t reserved_now) noexcept
{
  auto const d = static_cast<std::size_t>(device);
  reserved_at_reset_[d].store(reserved_now, std::memory_order_relaxed);
  reserved_reset_[d].store(true, std::memory_order_relaxed);
}

std::size_t default_pool_table::reserved_high(int device, std::size_t peak, std::size_t reserved_now) const noexcept
{
  auto const d = static_cast<std::size_t>(device);
  if (!reserved_reset_[d].load(std::memory_order_relaxed)) { return peak; }
  // A stack only grows between releases, so what it holds now is its peak since the reset, unless
  // it released meanwhile (then what it held at the reset is the floor this can promise).
  return std::max(reserved_at_reset_[d].load(std::memory_order_relaxed), reserved_now);
}

void default_pool_table::forget(int device) noexcept
{
  if (!has_device_slot(device)) { return; }
  auto const d = static_cast<std::size_t>(device);
  pools_[d].store(nullptr, std::memory_order_relaxed);
  reserved_reset_[d].store(false, std::memory_order_relaxed);
}

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
  auto const device = s.default_pools.device_with_stack(pool);
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
  auto const device = s.default_pools.device_with_stack(pool);
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
  auto const device = s.default_pools.device_with_stack(pool);
  if (!device) { return; }
  try {
    auto const stats = s.stacks.statistics(*device);
    if (stats && stats->reserved_bytes > keep) { (void)release_free_memory(*device); }
  } catch (...) {
  }
}

}  // namespace rmm::shim
