// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_device.hpp>

namespace rmm::mr {

/**
 * A process-wide check that `pool_memory_resource`, `arena_memory_resource` and
 * `fixed_size_memory_resource` make before they synchronize a device to take back memory other
 * streams freed, their last resort before failing a request: when the check returns false the
 * device is not synchronized and the request fails with out of memory instead. Whoever knows that a
 * synchronization would do harm sets it: during a stream capture, synchronizing the device ends
 * the capture as invalid, in every capture mode and from any thread.
 *
 * Without a check, synchronizing is allowed. The check gets the device and `context`, is called with
 * no lock of the resource held, and must not call into the resource. Set it once, before resources
 * are used; a null `check` removes it.
 */
using device_synchronization_check = bool (*)(void* context, cuda_device_id device) noexcept;

/**
 * @brief Sets the process-wide device-synchronization check, replacing the previous one.
 *
 * @param check the function to call, or null to remove the check
 * @param context passed to every call of `check`
 */
void set_device_synchronization_check(device_synchronization_check check, void* context) noexcept;

namespace detail {
/// Whether `device` may be synchronized now: the check's answer, true without one.
[[nodiscard]] bool device_synchronization_allowed(cuda_device_id device) noexcept;
}  // namespace detail

}  // namespace rmm::mr
