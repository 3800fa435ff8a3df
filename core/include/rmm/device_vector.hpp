// SPDX-License-Identifier: Apache-2.0
#pragma once

// thrust::device_vector whose memory comes from an rmm resource. Include from CUDA sources (nvcc):
// device_vector initializes its elements with kernels.

#include <rmm/mr/thrust_allocator_adaptor.hpp>

#include <thrust/device_vector.h>

namespace rmm {

/// A thrust::device_vector allocating through rmm::mr::thrust_allocator: by default from the
/// current device's resource on the default stream; pass
/// `rmm::mr::thrust_allocator<T>(stream, mr)` to choose. Create it with the resource's device
/// current; it may be destroyed with another device current (the allocator switches back).
template <typename T>
using device_vector = thrust::device_vector<T, mr::thrust_allocator<T>>;

}  // namespace rmm
