#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
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
  /// Empty buffer (no allocation) on the default stream and the current device's resource.
  device_buffer();

  /// Uninitialized buffer of `size` bytes.
  device_buffer(std::size_t size,
                cuda_stream_view stream,
                mr::any_device_resource mr = mr::get_current_device_resource());

  /// Uninitialized buffer of `size` bytes aligned to `alignment` (a power of two the resource
  /// supports; rmm's resources take up to CUDA_ALLOCATION_ALIGNMENT).
  explicit device_buffer(std::size_t size,
                         std::size_t alignment,
                         cuda_stream_view stream,
                         mr::any_device_resource mr = mr::get_current_device_resource());

  /// Buffer of `size` bytes copied from `source_data` (host or device memory). The copy is
  /// ordered on `stream`: keep host memory alive until the stream has reached it.
  device_buffer(void const* source_data,
                std::size_t size,
                cuda_stream_view stream,
                mr::any_device_resource mr = mr::get_current_device_resource());

  /// As above, with the memory aligned to `alignment`.
  explicit device_buffer(void const* source_data,
                         std::size_t size,
                         std::size_t alignment,
                         cuda_stream_view stream,
                         mr::any_device_resource mr = mr::get_current_device_resource());

  /// Deep copy of `other`'s contents (its size, not its capacity) with `other`'s alignment.
  device_buffer(device_buffer const& other,
                cuda_stream_view stream,
                mr::any_device_resource mr = mr::get_current_device_resource());

  /// Takes `other`'s memory, stream, resource and device; `other` is left empty.
  device_buffer(device_buffer&& other) noexcept;
  /// Frees this buffer's memory (on its stream), then takes `other`'s.
  device_buffer& operator=(device_buffer&& other) noexcept;

  device_buffer(device_buffer const&)            = delete;
  device_buffer& operator=(device_buffer const&) = delete;

  /// Frees the memory on stream(), with the buffer's device current.
  ~device_buffer() noexcept;

  /// Ensures capacity() >= new_capacity, reallocating and copying the contents if needed.
  void reserve(std::size_t new_capacity, cuda_stream_view stream);
  /// Sets size() to new_size. Grows the allocation (copying the contents) only when new_size >
  /// capacity(); new bytes are uninitialized.
  void resize(std::size_t new_size, cuda_stream_view stream);
  /// Reallocates so capacity() == size(), copying the contents.
  void shrink_to_fit(cuda_stream_view stream);

  [[nodiscard]] void const* data() const noexcept { return data_; }
  [[nodiscard]] void* data() noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::int64_t ssize() const noexcept { return static_cast<std::int64_t>(size_); }
  [[nodiscard]] bool is_empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  /// The alignment every allocation of this buffer has.
  [[nodiscard]] std::size_t alignment() const noexcept { return alignment_; }

  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }
  /// Orders later work (reallocation, deallocation) on `stream`. The caller synchronizes streams.
  void set_stream(cuda_stream_view stream) noexcept { stream_ = stream; }

  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept { return mr_; }
  /// The device the buffer was created on.
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }

 private:
  void allocate(std::size_t bytes);
  void deallocate() noexcept;
  void copy_from(void const* source, std::size_t bytes);
  /// Replaces the allocation with one of `new_capacity` bytes holding the first size() bytes.
  void reallocate(std::size_t new_capacity);

  void* data_{nullptr};
  std::size_t size_{0};
  std::size_t capacity_{0};
  std::size_t alignment_{CUDA_ALLOCATION_ALIGNMENT};
  cuda_stream_view stream_{};
  mr::any_device_resource mr_;
  cuda_device_id device_;
};

}  // namespace rmm
