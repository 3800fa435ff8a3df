#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/element_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>
#include <utility>

namespace rmm::mr {

/**
 * A stream-ordered allocator of `T`, like std::pmr::polymorphic_allocator but with the stream as
 * an argument of allocate and deallocate, drawing from an rmm resource.
 *
 * The resource defaults to the current device's resource, whose ownership the allocator shares
 * (as device_buffer does); a resource_ref is held without ownership. Like rmm's containers, the
 * allocator records the device current at construction and makes it current around every
 * allocation and deallocation.
 *
 * It is not a standard Allocator (allocate takes a stream): wrap it in stream_allocator_adaptor
 * to hand it to code expecting one.
 */
template <typename T>
class polymorphic_allocator {
 public:
  using value_type = T;

  /// The current device's resource.
  polymorphic_allocator() : polymorphic_allocator{get_current_device_resource()} {}

  /// Allocates from `mr`.
  polymorphic_allocator(any_device_resource mr)  // NOLINT: implicit, as std::pmr's from a resource
    : mr_{std::move(mr)}, device_{get_current_cuda_device()}
  {
  }

  /// Same resource and device as `other`.
  template <typename U>
  polymorphic_allocator(polymorphic_allocator<U> const& other) noexcept  // NOLINT: rebinding
    : mr_{other.mr_}, device_{other.device_}
  {
  }

  /// Uninitialized storage for `count` objects, ordered on `stream`.
  [[nodiscard]] value_type* allocate(std::size_t count, cuda_stream_view stream)
  {
    cuda_set_device_raii const on_device{device_};
    auto const bytes = rmm::detail::element_bytes<T>(count, "polymorphic_allocator");
    return static_cast<value_type*>(mr_.allocate(stream, bytes));
  }

  /// Frees storage from allocate(count, ...) on `stream`.
  void deallocate(value_type* ptr, std::size_t count, cuda_stream_view stream) noexcept
  {
    try {
      cuda_set_device_raii const on_device{device_};
      mr_.deallocate(stream, ptr, count * sizeof(T));
    } catch (rmm::cuda_error const&) {
      // Switching device failed (the runtime is unloading at exit): the memory goes with the process.
    }
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept { return mr_; }
  /// The device that was current when the allocator was created.
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }

  /// Equal allocators free each other's memory: equal resources, same device.
  template <typename U>
  friend bool operator==(polymorphic_allocator const& lhs, polymorphic_allocator<U> const& rhs) noexcept
  {
    return lhs.get_upstream_resource() == rhs.get_upstream_resource() && lhs.device() == rhs.device();
  }

 private:
  template <typename>
  friend class polymorphic_allocator;

  any_device_resource mr_;
  cuda_device_id device_;
};

/**
 * Presents a stream-ordered allocator (allocate(n, stream), deallocate(p, n, stream), such as
 * polymorphic_allocator) as a standard Allocator bound to one stream, for code that knows nothing
 * of streams:
 *
 *   auto adapted = rmm::mr::stream_allocator_adaptor(stream_alloc, stream);
 *   auto p = adapted.allocate(100);   // stream_alloc.allocate(100, stream)
 *
 * The memory is device memory: containers that construct elements on the host (std::vector)
 * cannot use it.
 */
template <typename Allocator>
class stream_allocator_adaptor {
 public:
  using value_type = typename std::allocator_traits<Allocator>::value_type;

  template <typename U>
  struct rebind {
    using other = stream_allocator_adaptor<typename std::allocator_traits<Allocator>::template rebind_alloc<U>>;
  };

  /// No default: the adaptor needs an allocator and a stream.
  stream_allocator_adaptor() = delete;

  /// Forwards to `allocator` on `stream`.
  stream_allocator_adaptor(Allocator const& allocator, cuda_stream_view stream) : alloc_{allocator}, stream_{stream} {}

  /// Rebinding copy: the same allocator (rebound) and stream.
  template <typename OtherAllocator>
  stream_allocator_adaptor(stream_allocator_adaptor<OtherAllocator> const& other)  // NOLINT: rebinding
    : stream_allocator_adaptor{Allocator{other.underlying_allocator()}, other.stream()}
  {
  }

  [[nodiscard]] value_type* allocate(std::size_t count) { return alloc_.allocate(count, stream_); }
  void deallocate(value_type* ptr, std::size_t count) noexcept { alloc_.deallocate(ptr, count, stream_); }

  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }
  [[nodiscard]] Allocator underlying_allocator() const noexcept { return alloc_; }

  /// Equal when the underlying allocators are equal and the stream is the same.
  template <typename OtherAllocator>
  friend bool operator==(stream_allocator_adaptor const& lhs,
                         stream_allocator_adaptor<OtherAllocator> const& rhs) noexcept
  {
    return lhs.underlying_allocator() == rhs.underlying_allocator() && lhs.stream() == rhs.stream();
  }

 private:
  Allocator alloc_;
  cuda_stream_view stream_;
};

/// stream_allocator_adaptor{allocator, stream}.
template <typename Allocator>
[[nodiscard]] auto make_stream_allocator_adaptor(Allocator const& allocator, cuda_stream_view stream)
{
  return stream_allocator_adaptor<Allocator>{allocator, stream};
}

}  // namespace rmm::mr
