// SPDX-License-Identifier: Apache-2.0
#pragma once

// Migrating managed memory to a device ahead of the work that reads it.

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>

#include <cuda/std/span>

#include <cstddef>

namespace rmm {

/**
 * @brief Prefetches `size` bytes at `ptr` to `device`, ordered on `stream`.
 *
 * Does nothing for memory that is not managed, or on a device without concurrent managed access
 * (where managed memory cannot be prefetched).
 *
 * @param ptr the start of the memory
 * @param size how many bytes
 * @param device the device to migrate them to; cudaCpuDeviceId (-1) for the host
 * @param stream the stream the migration is ordered on
 * @throws rmm::cuda_error when the prefetch of managed memory fails
 */
void prefetch(void const* ptr, std::size_t size, cuda_device_id device, cuda_stream_view stream);

/**
 * @brief Prefetches the elements of `data` (see the pointer form).
 *
 * @param data the elements
 * @param device the device to migrate them to
 * @param stream the stream the migration is ordered on
 * @throws rmm::cuda_error when the prefetch of managed memory fails
 */
template <class T>
void prefetch(cuda::std::span<T const> data, cuda_device_id device, cuda_stream_view stream)
{
  prefetch(data.data(), data.size_bytes(), device, stream);
}

}  // namespace rmm
