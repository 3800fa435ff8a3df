// SPDX-License-Identifier: Apache-2.0
#include "stacks/default_pools.hpp"

#include "driver/contexts.hpp"
#include "stacks/device_stacks.hpp"
#include "driver/real_driver.hpp"

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

std::optional<int> default_pool_table::device_with_stack(CUmemoryPool pool, device_stacks const& stacks) noexcept
{
  if (pool == nullptr) { return std::nullopt; }
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

}  // namespace rmm::shim
