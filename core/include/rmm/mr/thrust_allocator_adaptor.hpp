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
  using value_type = T;
  using pointer    = typename base::pointer;
  using size_type  = typename base::size_type;

  template <typename U>
  struct rebind {
    using other = thrust_allocator<U>;
  };

  /// Current device's resource, default stream.
  thrust_allocator() : thrust_allocator{cuda_stream_default} {}

  /// Current device's resource, on `stream`.
  explicit thrust_allocator(cuda_stream_view stream) : thrust_allocator{stream, get_current_device_resource()} {}

  /// `mr`, on `stream`.
  thrust_allocator(cuda_stream_view stream, any_device_resource mr)
    : stream_{stream}, mr_{std::move(mr)}, device_{get_current_cuda_device()}
  {
  }

  /// Same stream, resource and device as `other` (Thrust rebinds allocators to other types).
  template <typename U>
  thrust_allocator(thrust_allocator<U> const& other)  // NOLINT: implicit, as allocators must be
    : base{}, stream_{other.stream_}, mr_{other.mr_}, device_{other.device_}
  {
  }

  /// `count` uninitialized elements, with the recorded device current.
  pointer allocate(size_type count)
  {
    cuda_set_device_raii const on_device{device_};
    auto const bytes = rmm::detail::element_bytes<T>(count, "thrust_allocator");
    return thrust::device_pointer_cast(static_cast<T*>(mr_.allocate(stream_, bytes)));
  }

  /// Frees what allocate(count) returned, with the recorded device current.
  void deallocate(pointer ptr, size_type count) noexcept
  {
    try {
      cuda_set_device_raii const on_device{device_};
      mr_.deallocate(stream_, thrust::raw_pointer_cast(ptr), count * sizeof(T));
    } catch (rmm::cuda_error const&) {
      // Switching device failed (the runtime is unloading at exit): the memory goes with the process.
    }
  }

  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept { return mr_; }
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }
  /// The device that was current when the allocator was created.
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }

  /// Equal allocators free each other's memory: same resource (by its equality) and device.
  friend bool operator==(thrust_allocator const& lhs, thrust_allocator const& rhs) noexcept
  {
    return lhs.mr_ == rhs.mr_ && lhs.device_ == rhs.device_;
  }
  // Spelled out: thrust::device_malloc_allocator's own operator!= (always false) must not be used.
  friend bool operator!=(thrust_allocator const& lhs, thrust_allocator const& rhs) noexcept { return !(lhs == rhs); }

 private:
  template <typename>
  friend class thrust_allocator;

  cuda_stream_view stream_;
  any_device_resource mr_;
  cuda_device_id device_;
};

}  // namespace rmm::mr
