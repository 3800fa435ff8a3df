#pragma once

// The resource used for each device when no resource is passed explicitly.
//
// Initially, every device uses a cuda_memory_resource. All functions are thread-safe with respect
// to each other. The resource set for a device must have been created with that device current.
//
// The per-device table is never destroyed: at process exit the resources in it are dropped, not
// freed, so no CUDA call runs after the CUDA runtime has unloaded.

#include <rmm/cuda_device.hpp>
#include <rmm/resource_ref.hpp>

namespace rmm::mr {

/// Non-owning reference to the resource of `device_id`; valid until that resource is replaced and
/// the last owner of it is gone.
[[nodiscard]] device_async_resource_ref get_per_device_resource_ref(cuda_device_id device_id);
/// Shared ownership of the resource of `device_id`.
[[nodiscard]] any_device_resource get_per_device_resource(cuda_device_id device_id);

/// Makes `new_resource` the resource of `device_id`; returns the previous one.
any_device_resource set_per_device_resource(cuda_device_id device_id, any_device_resource new_resource);
/// Makes the referenced resource the resource of `device_id` without owning it; the caller keeps
/// it alive while it is set. Returns a reference to the previous resource; if rmm owned that one,
/// rmm keeps it alive (until exit) so the returned reference stays valid.
device_async_resource_ref set_per_device_resource_ref(cuda_device_id device_id,
                                                      device_async_resource_ref new_resource_ref);

/// Restores the initial cuda_memory_resource for `device_id`; returns the previous resource.
any_device_resource reset_per_device_resource(cuda_device_id device_id);
/// As reset_per_device_resource, returning a reference (kept valid as in set_per_device_resource_ref).
device_async_resource_ref reset_per_device_resource_ref(cuda_device_id device_id);

// The same for the calling thread's current device.
[[nodiscard]] device_async_resource_ref get_current_device_resource_ref();
[[nodiscard]] any_device_resource get_current_device_resource();
any_device_resource set_current_device_resource(any_device_resource new_resource);
device_async_resource_ref set_current_device_resource_ref(device_async_resource_ref new_resource_ref);
any_device_resource reset_current_device_resource();
device_async_resource_ref reset_current_device_resource_ref();

}  // namespace rmm::mr
