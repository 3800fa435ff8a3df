// SPDX-License-Identifier: Apache-2.0
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
  using value_type = T;  ///< the type of the objects allocated

  /**
   * @brief Allocates from the current device's resource.
   *
   * @throws rmm::cuda_error when there is no usable device
   */
  polymorphic_allocator() : polymorphic_allocator{get_current_device_resource()} {}

  /**
   * @brief Allocates from `mr`.
   *
   * @param mr the resource, created with the current device current
   * @throws rmm::cuda_error when there is no usable device
   */
  polymorphic_allocator(any_device_resource mr)  // NOLINT: implicit, as std::pmr's from a resource
    : mr_{std::move(mr)}, device_{get_current_cuda_device()}
  {
  }

  /**
   * @brief Same resource and device as `other`.
   *
   * @param other the allocator to rebind
   */
  template <typename U>
  polymorphic_allocator(polymorphic_allocator<U> const& other) noexcept  // NOLINT: rebinding
    : mr_{other.mr_}, device_{other.device_}
  {
  }

  /**
   * @brief Uninitialized storage for `count` objects, ordered on `stream`.
   *
   * @param count the number of objects
   * @param stream the stream the allocation is ordered on
   * @return the storage
   * @throws rmm::out_of_memory when the resource runs out of memory or the objects' bytes exceed
   * max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when the recorded device cannot be made current
   */
  [[nodiscard]] value_type* allocate(std::size_t count, cuda_stream_view stream)
  {
    cuda_set_device_raii const on_device{device_};
    auto const bytes = rmm::detail::element_bytes<T>(count, "polymorphic_allocator");
    return static_cast<value_type*>(mr_.allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT));
  }

  /**
   * @brief Frees storage from allocate(count, ...) on `stream`.
   *
   * @param ptr what allocate returned
   * @param count the count given to allocate
   * @param stream the stream the storage was last used on
   */
  void deallocate(value_type* ptr, std::size_t count, cuda_stream_view stream) noexcept
  {
    try {
      cuda_set_device_raii const on_device{device_};
      mr_.deallocate(stream, ptr, count * sizeof(T), rmm::CUDA_ALLOCATION_ALIGNMENT);
    } catch (rmm::cuda_error const&) {
      // Switching device failed (the runtime is unloading at exit): the memory goes with the process.
    }
  }

  /**
   * @brief The resource the allocator draws from.
   *
   * @return a reference valid while this allocator or a copy of it lives
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept { return mr_; }
  /**
   * @brief The device that was current when the allocator was created.
   *
   * @return the device made current around every allocation and deallocation
   */
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

  mutable any_device_resource mr_;  // a handle: references to it are handed out by const members
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
  using value_type = typename std::allocator_traits<Allocator>::value_type;  ///< the underlying allocator's value type

  /// The same adaptor over the underlying allocator rebound to `U`.
  template <typename U>
  struct rebind {
    /// the rebound adaptor type
    using other = stream_allocator_adaptor<typename std::allocator_traits<Allocator>::template rebind_alloc<U>>;
  };

  /// No default: the adaptor needs an allocator and a stream.
  stream_allocator_adaptor() = delete;

  /**
   * @brief Forwards to `allocator` on `stream`.
   *
   * @param allocator the stream-ordered allocator, copied
   * @param stream the stream every allocation and deallocation is ordered on
   */
  stream_allocator_adaptor(Allocator const& allocator, cuda_stream_view stream) : alloc_{allocator}, stream_{stream} {}

  /**
   * @brief Rebinding copy: the same allocator (rebound) and stream.
   *
   * @param other the adaptor to rebind
   */
  template <typename OtherAllocator>
  stream_allocator_adaptor(stream_allocator_adaptor<OtherAllocator> const& other)  // NOLINT: rebinding
    : stream_allocator_adaptor{Allocator{other.underlying_allocator()}, other.stream()}
  {
  }

  /**
   * @brief Uninitialized storage for `count` objects from the underlying allocator, on stream().
   *
   * Throws what the underlying allocator's allocate throws; the exceptions below are
   * polymorphic_allocator's.
   *
   * @param count the number of objects
   * @return the storage
   * @throws rmm::out_of_memory when the resource runs out of memory or the objects' bytes exceed
   * max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when the allocator's device cannot be made current
   */
  [[nodiscard]] value_type* allocate(std::size_t count) { return alloc_.allocate(count, stream_); }
  /**
   * @brief Frees storage from allocate(count) on stream().
   *
   * @param ptr what allocate returned
   * @param count the count given to allocate
   */
  void deallocate(value_type* ptr, std::size_t count) noexcept { alloc_.deallocate(ptr, count, stream_); }

  /**
   * @brief The stream every allocation and deallocation is ordered on.
   *
   * @return the stream
   */
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }
  /**
   * @brief The stream-ordered allocator this adaptor forwards to.
   *
   * @return a copy of it
   */
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

/**
 * @brief stream_allocator_adaptor{allocator, stream}, with `Allocator` deduced.
 *
 * @param allocator the stream-ordered allocator, copied
 * @param stream the stream every allocation and deallocation is ordered on
 * @return the adaptor
 */
template <typename Allocator>
[[nodiscard]] auto make_stream_allocator_adaptor(Allocator const& allocator, cuda_stream_view stream)
{
  return stream_allocator_adaptor<Allocator>{allocator, stream};
}

}  // namespace rmm::mr
