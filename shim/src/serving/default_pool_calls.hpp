// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the program asks of a device's default memory pool (default_pools.hpp), answered for the
// pool and the device's stack together: allocations from it, its usage attributes, its trim.

#include "driver/real_driver.hpp"

#include <cuda.h>

#include <cstddef>
#include <optional>

namespace rmm::shim {

/// cuMemAllocFromPoolAsync: served by the stack, as cuMemAllocAsync on `stream`, when `pool` is the
/// current device's default pool; nullopt to pass the call by (counted as a pool the program
/// names when the pool is not a default one, else as the async path counts it).
struct pass_or_serve {
  std::optional<CUresult> served;
  bool default_pool{};  ///< the pool was a default pool: any pass-by was counted already
};
[[nodiscard]] pass_or_serve serve_pool_allocation(CUdeviceptr* out,
                                                  std::size_t bytes,
                                                  CUmemoryPool pool,
                                                  CUstream stream,
                                                  stream_flavour flavour);

/// cuMemPoolGetAttribute, after the real call answered for `pool`: a default pool's reserved and
/// used bytes (current and high-water marks) include its device's stack.
void adjust_pool_attribute(CUmemoryPool pool, CUmemPool_attribute attribute, void* value) noexcept;

/// cuMemPoolSetAttribute, after the real call succeeded: resetting a default pool's high-water
/// mark resets the stack's part of it too.
void note_pool_attribute_set(CUmemoryPool pool, CUmemPool_attribute attribute) noexcept;

/// cuMemPoolTrimTo, after the real call succeeded: a default pool's stack gives its free memory
/// back when it holds more than `keep` bytes.
void trim_default_pool(CUmemoryPool pool, std::size_t keep) noexcept;

}  // namespace rmm::shim
