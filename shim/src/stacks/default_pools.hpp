// SPDX-License-Identifier: Apache-2.0
#pragma once

// The devices' default memory pools (cuDeviceGetDefaultMemPool), which the stacks stand in for. A
// program that names a default pool (XLA's cuda_async allocator allocates with
// cuMemAllocFromPoolAsync on it) did not make or configure a pool of its own: it asked for the
// device's ordinary stream-ordered memory, which the shim serves from the device's stack. What it
// then asks of that pool is answered for the pool and the stack together, so that the usage it
// reads stays true. A pool the program created (cuMemPoolCreate) is its own business and passes by.

#include <cuda.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <optional>

#include "devices.hpp"
#include "driver/real_driver.hpp"

namespace rmm::shim {

class device_stacks;

class default_pool_table {
 public:
  /// The current primary context's device when `pool` is that device's default pool; nullopt for
  /// any other pool (a pool the program made, another device's pool) or context.
  [[nodiscard]] std::optional<int> served_device(CUmemoryPool pool) noexcept;
  /// The device whose default pool `pool` is, among the devices whose stack was built.
  [[nodiscard]] std::optional<int> device_with_stack(CUmemoryPool pool, device_stacks const& stacks) noexcept;

  /// The program reset a high-water mark of `device`'s default pool: the stack's reserved bytes
  /// now are where its mark starts again.
  void reset_reserved_high(int device, std::size_t reserved_now) noexcept;
  /// The stack's reserved high-water mark as the pool reports it: the peak since the start, or,
  /// after a reset, at least what was reserved then and now.
  [[nodiscard]] std::size_t reserved_high(int device, std::size_t peak, std::size_t reserved_now) const noexcept;

  /// Forgotten with the device's context (cudaDeviceReset).
  void forget(int device) noexcept;

 private:
  [[nodiscard]] CUmemoryPool pool_of(int device) noexcept;

  std::array<std::atomic<CUmemoryPool>, max_devices> pools_{};
  std::array<std::atomic<bool>, max_devices> reserved_reset_{};
  std::array<std::atomic<std::size_t>, max_devices> reserved_at_reset_{};
};

}  // namespace rmm::shim
