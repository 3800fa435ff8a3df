// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/element_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <thrust/device_malloc_allocator.h>
#include <thrust/device_ptr.h>

#include <cstddef>
#include <utility>

namespace rmm::mr {

/**
 * A Thrust allocator (thrust::device_ptr<T>) drawing from an rmm resource on one stream: the
 * allocator behind rmm::device_vector and behind rmm::exec_policy's temporary storage.
 *
 * - The resource defaults to the current device's resource, whose ownership the allocator (and
 *   every copy of it) shares; passing a resource object shares it too, a resource_ref does not.
 * - It records the device that is current when it is constructed and makes that device current
 *   around every allocation and deallocation, so a container using it may be destroyed with
 *   another device current. Create it with the resource's device current.
 * - Allocations and deallocations are ordered on stream().
 */
template <typename T>
class thrust_allocator : public thrust::device_malloc_allocator<T> {
  using base = thrust::device_malloc_allocator<T>;

 public:
  using value_type = T;                         ///< the element type
  using pointer    = typename base::pointer;    ///< thrust::device_ptr<T>, what allocate() returns
  using size_type  = typename base::size_type;  ///< the type of element counts

  /// The same allocator for elements of type `U`.
  template <typename U>
  struct rebind {
    using other = thrust_allocator<U>;  ///< the rebound allocator type
  };

  /**
   * @brief Allocates from the current device's resource on the default stream.
   *
   * @throws rmm::cuda_error when there is no usable device
   */
  thrust_allocator() : thrust_allocator{cuda_stream_default} {}

  /**
   * @brief Allocates from the current device's resource on `stream`.
   *
   * @param stream the stream allocations and deallocations are ordered on
   * @throws rmm::cuda_error when there is no usable device
   */
  explicit thrust_allocator(cuda_stream_view stream) : thrust_allocator{stream, get_current_device_resource()} {}

  /**
   * @brief Allocates from `mr` on `stream`.
   *
   * @param stream the stream allocations and deallocations are ordered on
   * @param mr the resource, created with the current device current
   * @throws rmm::cuda_error when there is no usable device
   */
  thrust_allocator(cuda_stream_view stream, any_device_resource mr)
    : stream_{stream}, mr_{std::move(mr)}, device_{get_current_cuda_device()}
  {
  }

  /**
   * @brief Same stream, resource and device as `other` (Thrust rebinds allocators to other types).
   *
   * @param other the allocator to rebind
   */
  template <typename U>
  thrust_allocator(thrust_allocator<U> const& other)  // NOLINT: implicit, as allocators must be
    : base{}, stream_{other.stream_}, mr_{other.mr_}, device_{other.device_}
  {
  }

  /**
   * @brief `count` uninitialized elements, with the recorded device current.
   *
   * @param count the number of elements
   * @return a device pointer to the first element
   * @throws rmm::out_of_memory when the resource runs out of memory or the elements' bytes exceed
   * max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when the recorded device cannot be made current
   */
  pointer allocate(size_type count)
  {
    cuda_set_device_raii const on_device{device_};
    auto const bytes = rmm::detail::element_bytes<T>(count, "thrust_allocator");
    return thrust::device_pointer_cast(static_cast<T*>(mr_.allocate(stream_, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT)));
  }

  /**
   * @brief Frees what allocate(count) returned, with the recorded device current.
   *
   * @param ptr what allocate returned
   * @param count the count given to allocate
   */
  void deallocate(pointer ptr, size_type count) noexcept
  {
    try {
      cuda_set_device_raii const on_device{device_};
      mr_.deallocate(stream_, thrust::raw_pointer_cast(ptr), count * sizeof(T), rmm::CUDA_ALLOCATION_ALIGNMENT);
    } catch (rmm::cuda_error const&) {
      // Switching device failed (the runtime is unloading at exit): the memory goes with the process.
    }
  }

  /**
   * @brief The resource the allocator draws from.
   *
   * @return a reference valid while this allocator or a copy of it lives
   */
  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept { return mr_; }
  /**
   * @brief The resource the allocator draws from, under the name RMM's adaptors give it.
   *
   * @return the same reference as memory_resource()
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept { return mr_; }
  /**
   * @brief The stream allocations and deallocations are ordered on.
   *
   * @return the stream
   */
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }
  /**
   * @brief The device that was current when the allocator was created.
   *
   * @return the device made current around every allocation and deallocation
   */
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }

  /// Equal allocators free each other's memory: same resource (by its equality) and device.
  friend bool operator==(thrust_allocator const& lhs, thrust_allocator const& rhs) noexcept
  {
    return lhs.mr_ == rhs.mr_ && lhs.device_ == rhs.device_;
  }
  // Spelled out: thrust::device_malloc_allocator's own operator!= (always false) must not be used.
  /// @brief Negation of operator==.
  friend bool operator!=(thrust_allocator const& lhs, thrust_allocator const& rhs) noexcept { return !(lhs == rhs); }

 private:
  template <typename>
  friend class thrust_allocator;

  cuda_stream_view stream_;
  mutable any_device_resource mr_;  // a handle: references to it are handed out by const members
  cuda_device_id device_;
};

}  // namespace rmm::mr
