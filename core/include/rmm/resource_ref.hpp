#pragma once

// The resource reference types rmm's APIs take and return.
//
// Mapping to the RMM documentation (which uses CCCL >= 3.1; CUDA 13.0 ships CCCL 3.0.1):
//   rmm::device_async_resource_ref                         = rmm::mr::resource_ref<cuda::mr::device_accessible>
//   cuda::mr::any_resource<cuda::mr::device_accessible>    -> rmm::mr::any_resource<cuda::mr::device_accessible>
//                                                             (alias rmm::mr::any_device_resource)

#include <rmm/mr/any_resource.hpp>
#include <rmm/mr/detail/cccl.hpp>
#include <rmm/mr/resource_ref.hpp>

namespace rmm {

/// Non-owning reference to a resource whose memory the device can access.
using device_async_resource_ref = mr::resource_ref<cuda::mr::device_accessible>;
/// rmm's resources are all stream-ordered, so the synchronous-only name is the same type.
using device_resource_ref = device_async_resource_ref;
/// Non-owning reference to a resource whose memory both host and device can access.
using host_device_async_resource_ref = mr::resource_ref<cuda::mr::host_accessible, cuda::mr::device_accessible>;
/// The synchronous-only name of host_device_async_resource_ref: the same type.
using host_device_resource_ref = host_device_async_resource_ref;

/// Non-owning reference to a resource whose memory the host can access (pinned host memory).
using host_async_resource_ref = mr::resource_ref<cuda::mr::host_accessible>;
/// The synchronous-only name of host_async_resource_ref: the same type.
using host_resource_ref = host_async_resource_ref;

namespace mr {
/// Owning, shared reference to a device-accessible resource (cuda::mr::any_resource<device_accessible>).
using any_device_resource = any_resource<cuda::mr::device_accessible>;
}  // namespace mr

}  // namespace rmm
