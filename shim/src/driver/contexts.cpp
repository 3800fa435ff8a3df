// SPDX-License-Identifier: Apache-2.0
#include "driver/contexts.hpp"

#include "devices.hpp"

#include "driver/real_driver.hpp"

#include <array>
#include <atomic>

namespace rmm::shim {

namespace {

/// Retained once per device and never released: the primary context outlives every stack on it.
CUcontext primary_context(int device) noexcept
{
  static std::array<std::atomic<CUcontext>, max_devices> known{};
  if (!has_device_slot(device)) { return nullptr; }
  auto& slot = known[static_cast<std::size_t>(device)];
  if (auto ctx = slot.load(std::memory_order_acquire); ctx != nullptr) { return ctx; }
  CUcontext ctx{};
  if (real()->primary_ctx_retain(&ctx, device) != CUDA_SUCCESS) { return nullptr; }
  CUcontext expected{};
  if (!slot.compare_exchange_strong(expected, ctx)) { return expected; }  // retained twice: harmless
  return ctx;
}

}  // namespace

std::optional<int> current_primary_device() noexcept
{
  auto const* driver = real();
  CUcontext ctx{};
  if (driver->ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr) { return std::nullopt; }
  // The device of the primary context this thread found last: the shim retains primary contexts
  // for good, so that handle never comes back as another context.
  thread_local CUcontext last_primary{};
  thread_local int last_device{-1};
  if (ctx == last_primary) { return last_device; }
  CUdevice device{};
  if (driver->ctx_get_device(&device) != CUDA_SUCCESS) { return std::nullopt; }
  if (primary_context(device) != ctx) { return std::nullopt; }
  last_primary = ctx;
  last_device  = device;
  return device;
}

scoped_device_context::scoped_device_context(int device) noexcept
{
  auto const* driver = real();
  auto const target  = primary_context(device);
  if (target == nullptr || driver->ctx_get_current(&previous_) != CUDA_SUCCESS || previous_ == target) { return; }
  switched_ = driver->ctx_set_current(target) == CUDA_SUCCESS;
}

scoped_device_context::~scoped_device_context()
{
  if (switched_) { (void)real()->ctx_set_current(previous_); }
}

}  // namespace rmm::shim
