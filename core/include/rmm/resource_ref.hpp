// SPDX-License-Identifier: Apache-2.0
#pragma once

// The resource types rmm's APIs take and return: CCCL's (3.5 or newer), as the RMM documentation
// names them.
//
//   rmm::device_async_resource_ref   cuda::mr::resource_ref<cuda::mr::device_accessible>
//   rmm::device_resource_ref         cuda::mr::synchronous_resource_ref<cuda::mr::device_accessible>
//   owning, type-erased              cuda::mr::any_resource<cuda::mr::device_accessible>
//                                    (also spelled rmm::mr::any_device_resource)
//
// A resource_ref refers to a resource that must outlive it. An any_resource holds a copy of the
// resource it is given; rmm's resources share their state between copies, so the copy is cheap and
// keeps that state alive. Constructing an any_resource from a resource_ref copies the referenced
// resource too.

#include <rmm/mr/detail/cccl.hpp>

namespace rmm {

/// Non-owning reference to a stream-ordered resource whose memory the device can access.
using device_async_resource_ref = cuda::mr::resource_ref<cuda::mr::device_accessible>;
/// Non-owning reference to a resource, used through its synchronous interface, whose memory the
/// device can access.
using device_resource_ref = cuda::mr::synchronous_resource_ref<cuda::mr::device_accessible>;
/// Non-owning reference to a stream-ordered resource whose memory host and device can access.
using host_device_async_resource_ref = cuda::mr::resource_ref<cuda::mr::host_accessible, cuda::mr::device_accessible>;
/// The synchronous form of host_device_async_resource_ref.
using host_device_resource_ref =
  cuda::mr::synchronous_resource_ref<cuda::mr::host_accessible, cuda::mr::device_accessible>;
/// Non-owning reference to a stream-ordered resource whose memory the host can access.
using host_async_resource_ref = cuda::mr::resource_ref<cuda::mr::host_accessible>;
/// The synchronous form of host_async_resource_ref.
using host_resource_ref = cuda::mr::synchronous_resource_ref<cuda::mr::host_accessible>;

namespace mr {
/// CCCL's non-owning reference, under rmm's namespace.
template <class... Properties>
using resource_ref = cuda::mr::resource_ref<Properties...>;
/// CCCL's owning, type-erased resource, under rmm's namespace.
template <class... Properties>
using any_resource = cuda::mr::any_resource<Properties...>;
/// Owning, type-erased, device-accessible resource: cuda::mr::any_resource<device_accessible>.
using any_device_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;
}  // namespace mr

}  // namespace rmm
