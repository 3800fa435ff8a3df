// SPDX-License-Identifier: Apache-2.0
#pragma once

// The resource used for each device when no resource is passed explicitly.
//
// Initially, every device uses a cuda_memory_resource. All functions are thread-safe with respect
// to each other. The resource set for a device must have been created with that device current.
//
// The per-device table is never destroyed: at process exit the resources in it are dropped, not
// freed, so no CUDA call runs after the CUDA runtime has unloaded.

#include <rmm/cuda_device.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>  // the initial resource; RMM code finds it here
#include <rmm/resource_ref.hpp>

namespace rmm::mr {

/**
 * @brief Non-owning reference to the resource of `device_id`.
 *
 * @param device_id the device
 * @return a reference valid until that resource is replaced and the last owner of it is gone
 * @throws rmm::logic_error when `device_id` is not a visible device
 * @throws rmm::cuda_error when the CUDA driver cannot be used
 */
[[nodiscard]] device_async_resource_ref get_per_device_resource_ref(cuda_device_id device_id);
/**
 * @brief Shared ownership of the resource of `device_id`.
 *
 * @param device_id the device
 * @return the resource, kept alive by the returned object even after it is replaced
 * @throws rmm::logic_error when `device_id` is not a visible device
 * @throws rmm::cuda_error when the CUDA driver cannot be used
 */
[[nodiscard]] any_device_resource get_per_device_resource(cuda_device_id device_id);

/**
 * @brief Makes `new_resource` the resource of `device_id`.
 *
 * @param device_id the device
 * @param new_resource the new resource, created with `device_id` current; rmm shares ownership
 * @return the previous resource
 * @throws rmm::logic_error when `device_id` is not a visible device
 * @throws rmm::cuda_error when the CUDA driver cannot be used
 */
any_device_resource set_per_device_resource(cuda_device_id device_id, any_device_resource new_resource);
/**
 * @brief Makes the referenced resource the resource of `device_id` without owning it.
 *
 * @param device_id the device
 * @param new_resource_ref the new resource, created with `device_id` current; the caller keeps it
 * alive while it is set
 * @return a reference to the previous resource; if rmm owned that one, rmm keeps it alive (until
 * exit) so the returned reference stays valid
 * @throws rmm::logic_error when `device_id` is not a visible device
 * @throws rmm::cuda_error when the CUDA driver cannot be used
 */
device_async_resource_ref set_per_device_resource_ref(cuda_device_id device_id,
                                                      device_async_resource_ref new_resource_ref);

/**
 * @brief Restores the initial cuda_memory_resource for `device_id`.
 *
 * @param device_id the device
 * @return the previous resource
 * @throws rmm::logic_error when `device_id` is not a visible device
 * @throws rmm::cuda_error when the CUDA driver cannot be used
 */
any_device_resource reset_per_device_resource(cuda_device_id device_id);
/**
 * @brief As reset_per_device_resource, returning a reference.
 *
 * @param device_id the device
 * @return a reference to the previous resource, kept valid as in set_per_device_resource_ref
 * @throws rmm::logic_error when `device_id` is not a visible device
 * @throws rmm::cuda_error when the CUDA driver cannot be used
 */
device_async_resource_ref reset_per_device_resource_ref(cuda_device_id device_id);

namespace detail {
/**
 * @brief The resource every device starts with: one cuda_memory_resource, never destroyed.
 *
 * @return a reference to it, valid for the life of the process
 */
[[nodiscard]] device_async_resource_ref initial_resource();
}  // namespace detail

// The same for the calling thread's current device.

/**
 * @brief get_per_device_resource_ref for the current device.
 *
 * @return a reference valid until that resource is replaced and the last owner of it is gone
 * @throws rmm::cuda_error when there is no usable device
 */
[[nodiscard]] device_async_resource_ref get_current_device_resource_ref();
/**
 * @brief get_per_device_resource for the current device.
 *
 * @return the resource, kept alive by the returned object even after it is replaced
 * @throws rmm::cuda_error when there is no usable device
 */
[[nodiscard]] any_device_resource get_current_device_resource();
/**
 * @brief set_per_device_resource for the current device.
 *
 * @param new_resource the new resource, created with the current device current
 * @return the previous resource
 * @throws rmm::cuda_error when there is no usable device
 */
any_device_resource set_current_device_resource(any_device_resource new_resource);
/**
 * @brief set_per_device_resource_ref for the current device.
 *
 * @param new_resource_ref the new resource, created with the current device current; the caller
 * keeps it alive while it is set
 * @return a reference to the previous resource, kept valid as in set_per_device_resource_ref
 * @throws rmm::cuda_error when there is no usable device
 */
device_async_resource_ref set_current_device_resource_ref(device_async_resource_ref new_resource_ref);
/**
 * @brief reset_per_device_resource for the current device.
 *
 * @return the previous resource
 * @throws rmm::cuda_error when there is no usable device
 */
any_device_resource reset_current_device_resource();
/**
 * @brief reset_per_device_resource_ref for the current device.
 *
 * @return a reference to the previous resource, kept valid as in set_per_device_resource_ref
 * @throws rmm::cuda_error when there is no usable device
 */
device_async_resource_ref reset_current_device_resource_ref();

}  // namespace rmm::mr
