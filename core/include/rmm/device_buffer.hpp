// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>  // reachable here, as in RMM
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <cstdint>

namespace rmm {

/**
 * Untyped, uninitialized, stream-ordered device memory with RAII ownership.
 *
 * - Memory comes from the resource given at construction (default: the current device's
 *   resource, whose ownership the buffer shares, so replacing the current resource later does not
 *   pull it from under the buffer). Passing a resource object shares ownership of it; passing a
 *   resource reference does not, and the referenced resource must outlive the buffer.
 * - The buffer remembers the device that was current when it was constructed and makes it
 *   current for every allocation and deallocation, the destructor included, so it may be
 *   destroyed with another device current.
 * - All work (allocation, copies, deallocation) is ordered on the buffer's stream(); the memory
 *   may be used on other streams only after synchronizing with it.
 * - Memory is aligned to alignment() (default CUDA_ALLOCATION_ALIGNMENT); reallocations keep it.
 */
class device_buffer {
 public:
  /**
   * @brief Empty buffer (no allocation) on the default stream and the current device's resource.
   *
   * @throws rmm::cuda_error when there is no usable device
   */
  device_buffer();

  /**
   * @brief Uninitialized buffer of `size` bytes, aligned to CUDA_ALLOCATION_ALIGNMENT.
   *
   * @param size bytes to allocate
   * @param stream the stream the allocation, and later the deallocation, are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::out_of_memory when the resource runs out of memory or `size` exceeds
   * mr::max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device
   */
  device_buffer(std::size_t size,
                cuda_stream_view stream,
                mr::any_device_resource mr = mr::get_current_device_resource());

  /**
   * @brief Uninitialized buffer of `size` bytes aligned to `alignment`.
   *
   * @param size bytes to allocate
   * @param alignment a power of two the resource supports; rmm's resources take up to
   * CUDA_ALLOCATION_ALIGNMENT (wrap them in an aligned_resource_adaptor for more)
   * @param stream the stream the allocation, and later the deallocation, are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::logic_error when `alignment` is not a power of two, or is one the resource refuses
   * @throws rmm::out_of_memory when the resource runs out of memory or `size` exceeds
   * mr::max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device
   */
  explicit device_buffer(std::size_t size,
                         std::size_t alignment,
                         cuda_stream_view stream,
                         mr::any_device_resource mr = mr::get_current_device_resource());

  /**
   * @brief Buffer of `size` bytes copied from `source_data` (host or device memory).
   *
   * The copy is ordered on `stream`: keep host memory alive until the stream has reached it.
   *
   * @param source_data the bytes to copy; may be null only when `size` is 0
   * @param size bytes to allocate and copy
   * @param stream the stream the allocation, the copy and later the deallocation are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::logic_error when `source_data` is null and `size` is not 0
   * @throws rmm::out_of_memory when the resource runs out of memory or `size` exceeds
   * mr::max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device or the copy fails
   */
  device_buffer(void const* source_data,
                std::size_t size,
                cuda_stream_view stream,
                mr::any_device_resource mr = mr::get_current_device_resource());

  /**
   * @brief Buffer of `size` bytes copied from `source_data`, with the memory aligned to `alignment`.
   *
   * The copy is ordered on `stream`: keep host memory alive until the stream has reached it.
   *
   * @param source_data the bytes to copy (host or device memory); may be null only when `size` is 0
   * @param size bytes to allocate and copy
   * @param alignment a power of two the resource supports
   * @param stream the stream the allocation, the copy and later the deallocation are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::logic_error when `source_data` is null and `size` is not 0, or `alignment` is not a
   * power of two or is one the resource refuses
   * @throws rmm::out_of_memory when the resource runs out of memory or `size` exceeds
   * mr::max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device or the copy fails
   */
  explicit device_buffer(void const* source_data,
                         std::size_t size,
                         std::size_t alignment,
                         cuda_stream_view stream,
                         mr::any_device_resource mr = mr::get_current_device_resource());

  /**
   * @brief Deep copy of `other`'s contents (its size, not its capacity) with `other`'s alignment.
   *
   * @param other the buffer to copy; its contents must be ready on `stream`
   * @param stream the stream the allocation, the copy and later the deallocation are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::logic_error when the resource refuses `other`'s alignment
   * @throws rmm::out_of_memory when the resource runs out of memory
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device or the copy fails
   */
  device_buffer(device_buffer const& other,
                cuda_stream_view stream,
                mr::any_device_resource mr = mr::get_current_device_resource());

  /**
   * @brief Takes `other`'s memory, stream, resource and device; `other` is left empty.
   *
   * @param other the buffer to move from
   */
  device_buffer(device_buffer&& other) noexcept;
  /**
   * @brief Frees this buffer's memory (on its stream), then takes `other`'s.
   *
   * @param other the buffer to move from; left empty
   * @return this buffer
   */
  device_buffer& operator=(device_buffer&& other) noexcept;

  device_buffer(device_buffer const&)            = delete;
  device_buffer& operator=(device_buffer const&) = delete;

  /// @brief Frees the memory on stream(), with the buffer's device current.
  ~device_buffer() noexcept;

  /**
   * @brief Ensures capacity() >= new_capacity, reallocating and copying the contents if needed.
   *
   * @param new_capacity the least capacity wanted, in bytes
   * @param stream the stream the reallocation and copy are ordered on; becomes stream()
   * @throws rmm::out_of_memory when the resource runs out of memory or `new_capacity` exceeds
   * mr::max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when the device cannot be made current or the copy fails
   */
  void reserve(std::size_t new_capacity, cuda_stream_view stream);
  /**
   * @brief Sets size() to new_size.
   *
   * Grows the allocation (copying the contents) only when new_size > capacity(); new bytes are
   * uninitialized. Shrinking keeps the memory (see shrink_to_fit).
   *
   * @param new_size the new size in bytes
   * @param stream the stream a reallocation and copy are ordered on; becomes stream()
   * @throws rmm::out_of_memory when the resource runs out of memory or `new_size` exceeds
   * mr::max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when the device cannot be made current or the copy fails
   */
  void resize(std::size_t new_size, cuda_stream_view stream);
  /**
   * @brief Reallocates so capacity() == size(), copying the contents.
   *
   * @param stream the stream the reallocation and copy are ordered on; becomes stream()
   * @throws rmm::out_of_memory when the resource runs out of memory
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when the device cannot be made current or the copy fails
   */
  void shrink_to_fit(cuda_stream_view stream);

  /**
   * @brief The device memory.
   *
   * @return a pointer to the first byte; null when nothing is allocated
   */
  [[nodiscard]] void const* data() const noexcept { return data_; }
  /**
   * @brief The device memory.
   *
   * @return a pointer to the first byte; null when nothing is allocated
   */
  [[nodiscard]] void* data() noexcept { return data_; }
  /**
   * @brief The number of bytes in use.
   *
   * @return the size in bytes
   */
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /**
   * @brief The number of bytes in use, signed.
   *
   * @return the size in bytes
   */
  [[nodiscard]] std::int64_t ssize() const noexcept { return static_cast<std::int64_t>(size_); }
  /**
   * @brief Whether size() is 0.
   *
   * @return true when the buffer holds no bytes (its capacity may still be above 0)
   */
  [[nodiscard]] bool is_empty() const noexcept { return size_ == 0; }
  /**
   * @brief The number of bytes allocated.
   *
   * @return the capacity in bytes, at least size()
   */
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  /**
   * @brief The alignment every allocation of this buffer has.
   *
   * @return the alignment in bytes
   */
  [[nodiscard]] std::size_t alignment() const noexcept { return alignment_; }

  /**
   * @brief The stream the buffer's allocation and deallocation are ordered on.
   *
   * @return the stream
   */
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }
  /**
   * @brief Orders later work (reallocation, deallocation) on `stream`.
   *
   * The caller synchronizes the old and the new stream.
   *
   * @param stream the new stream
   */
  void set_stream(cuda_stream_view stream) noexcept { stream_ = stream; }

  /**
   * @brief The resource the memory comes from.
   *
   * @return a reference valid while the buffer lives
   */
  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept { return mr_; }
  /**
   * @brief The device the buffer was created on.
   *
   * @return the device that was current at construction
   */
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }

 private:
  /// Constructors only: the buffer's device is current.
  void allocate(std::size_t bytes);
  void deallocate() noexcept;
  /// Constructors only, as allocate().
  void copy_from(void const* source, std::size_t bytes);
  /// Replaces the allocation with one of `new_capacity` bytes holding the first size() bytes.
  void reallocate(std::size_t new_capacity);

  void* data_{nullptr};
  std::size_t size_{0};
  std::size_t capacity_{0};
  std::size_t alignment_{CUDA_ALLOCATION_ALIGNMENT};
  cuda_stream_view stream_{};
  mutable mr::any_device_resource mr_;  // a handle: references to it are handed out by const members
  cuda_device_id device_;
};

}  // namespace rmm
