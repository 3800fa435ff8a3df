// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_device.hpp>

#include <cstddef>

namespace rmm::mr {

/**
 * A process-wide hook that `pool_memory_resource`, `arena_memory_resource` and
 * `fixed_size_memory_resource` call just before they would take more memory from their upstream
 * (or map more device memory), and `limiting_resource_adaptor` before it refuses a request over its
 * limit: the last chance for whoever holds memory that is about to become free again (frees
 * waiting for the device to finish with the memory, a cache of its own) to hand it back instead.
 *
 * The callback gets the device and the bytes the resource needs and returns true when it gave
 * memory back. The resource then looks at its free memory again and, while the request still does
 * not fit, calls the callback again until it returns false: a callback may give back a little at a
 * time (the memory that is cheapest to give back first) and stop as soon as the request fits. It is called
 * with no lock of the resource held, may free memory into any resource (the calling one included)
 * and may wait, but must not allocate from the calling resource. `context` is passed through.
 * Set it once, before resources are used; a null `callback` removes it.
 */
using before_growth_callback = bool (*)(void* context, cuda_device_id device, std::size_t bytes) noexcept;

/**
 * @brief Sets the process-wide before-growth hook, replacing the previous one.
 *
 * @param callback the function to call, or null to remove the hook
 * @param context passed to every call of `callback`
 */
void set_before_growth_callback(before_growth_callback callback, void* context) noexcept;

namespace detail {
/// Calls the hook, if one is set; false otherwise.
[[nodiscard]] bool call_before_growth(cuda_device_id device, std::size_t bytes) noexcept;
}  // namespace detail

}  // namespace rmm::mr
