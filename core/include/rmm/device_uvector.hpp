// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/element_bytes.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/std/iterator>
#include <cuda/std/span>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace rmm {

/**
 * A typed, *uninitialized*, stream-ordered vector of `T` in device memory, stored in a
 * device_buffer.
 *
 * Unlike thrust::device_vector it never initializes its elements (no fill kernel when it is
 * created or grown), which is why `T` must be trivially copyable: elements are only ever copied
 * bytewise. Fill it with a kernel or a Thrust algorithm on stream(), or element by element.
 *
 * Everything device_buffer promises holds here: the memory comes from the resource given at
 * construction (default: the current device's, shared), the vector remembers the device that was
 * current when it was created and makes it current for every (de)allocation, its destructor
 * included, and all work is ordered on stream().
 *
 * Element access from the host (element, set_element, ...) copies through cudaMemcpyAsync on the
 * given stream; the `_async` forms return before the copy ran, so their host source must stay
 * alive until the stream reaches it (passing a temporary does not compile).
 */
template <typename T>
class device_uvector {
  static_assert(std::is_trivially_copyable_v<T>,
                "device_uvector holds trivially copyable types only: its elements are uninitialized "
                "and copied bytewise");

 public:
  using value_type             = T;                  ///< the element type
  using size_type              = std::size_t;        ///< the type of sizes and element indices
  using reference              = value_type&;        ///< a reference to an element
  using const_reference        = value_type const&;  ///< a const reference to an element
  using pointer                = value_type*;        ///< the device pointer data() returns
  using const_pointer          = value_type const*;  ///< the device pointer data() const returns
  using iterator               = pointer;            ///< the iterator begin() returns: a device pointer
  using const_iterator         = const_pointer;      ///< the iterator cbegin() returns: a device pointer
  using reverse_iterator       = cuda::std::reverse_iterator<iterator>;        ///< the iterator rbegin() returns
  using const_reverse_iterator = cuda::std::reverse_iterator<const_iterator>;  ///< the iterator crbegin() returns

  /// No default constructor: every vector needs a stream to order its deallocation on.
  device_uvector() = delete;

  /**
   * @brief `size` uninitialized elements, allocated on `stream` from `mr`.
   *
   * @param size the number of elements
   * @param stream the stream the allocation, and later the deallocation, are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::out_of_memory when the resource runs out of memory or the elements' bytes exceed
   * mr::max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device
   */
  explicit device_uvector(size_type size,
                          cuda_stream_view stream,
                          mr::any_device_resource mr = mr::get_current_device_resource())
    : storage_{detail::element_bytes<T>(size, "device_uvector"), alignof(T), stream, std::move(mr)}
  {
  }

  /**
   * @brief Deep copy of `other`'s elements, allocated and copied on `stream` from `mr`.
   *
   * @param other the vector to copy; its elements must be ready on `stream`
   * @param stream the stream the allocation, the copy and later the deallocation are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::out_of_memory when the resource runs out of memory
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device or the copy fails
   */
  explicit device_uvector(device_uvector const& other,
                          cuda_stream_view stream,
                          mr::any_device_resource mr = mr::get_current_device_resource())
    : storage_{other.storage_, stream, std::move(mr)}
  {
  }

  // Copying needs a stream, so only the constructor above copies.
  device_uvector(device_uvector const&)            = delete;
  device_uvector& operator=(device_uvector const&) = delete;
  /// @brief Default move constructor; the moved-from vector is left empty
  device_uvector(device_uvector&&) noexcept = default;
  /**
   * @brief Default move assignment operator
   *
   * Frees this vector's memory (on its stream, on its device), then takes `other`'s.
   *
   * @return a reference to this vector
   */
  device_uvector& operator=(device_uvector&&) noexcept = default;
  ~device_uvector()                                    = default;

  /**
   * @brief Pointer to element `element_index` (not checked against size()).
   *
   * @param element_index the element's index
   * @return a device pointer to the element
   */
  [[nodiscard]] pointer element_ptr(size_type element_index) noexcept { return data() + element_index; }
  /**
   * @brief Pointer to element `element_index` (not checked against size()).
   *
   * @param element_index the element's index
   * @return a device pointer to the element
   */
  [[nodiscard]] const_pointer element_ptr(size_type element_index) const noexcept { return data() + element_index; }

  /**
   * @brief Copies `value` into element `element_index`, ordered on `stream`; returns before the
   * copy ran.
   *
   * Integral zeros (and bools) are written with cudaMemsetAsync, which reads no host memory.
   *
   * @param element_index the element's index, below size()
   * @param value the new value, read when the stream reaches the copy
   * @param stream the stream the copy is ordered on
   * @throws rmm::out_of_range (a std::out_of_range) for an index >= size()
   * @throws rmm::cuda_error when the copy cannot be enqueued
   */
  void set_element_async(size_type element_index, value_type const& value, cuda_stream_view stream)
  {
    check_index(element_index, "set_element_async");
    if constexpr (std::is_same_v<value_type, bool>) {
      RMM_CUDA_TRY(cudaMemsetAsync(element_ptr(element_index), value ? 1 : 0, sizeof(value), stream.value()));
      return;
    } else if constexpr (std::is_integral_v<value_type>) {
      if (value == value_type{0}) {
        set_element_to_zero_async(element_index, stream);
        return;
      }
    }
    RMM_CUDA_TRY(cudaMemcpyAsync(element_ptr(element_index), &value, sizeof(value), cudaMemcpyDefault, stream.value()));
  }
  /// A temporary would be gone before the asynchronous copy reads it: use set_element.
  void set_element_async(size_type, value_type const&&, cuda_stream_view) = delete;

  /**
   * @brief Sets element `element_index`'s bytes to zero, ordered on `stream`.
   *
   * @param element_index the element's index, below size()
   * @param stream the stream the memset is ordered on
   * @throws rmm::out_of_range for an index >= size()
   * @throws rmm::cuda_error when the memset cannot be enqueued
   */
  void set_element_to_zero_async(size_type element_index, cuda_stream_view stream)
  {
    check_index(element_index, "set_element_to_zero_async");
    RMM_CUDA_TRY(cudaMemsetAsync(element_ptr(element_index), 0, sizeof(value_type), stream.value()));
  }

  /**
   * @brief Copies `value` into element `element_index` and waits for `stream`, so `value` may be a
   * temporary.
   *
   * @param element_index the element's index, below size()
   * @param value the new value
   * @param stream the stream the copy is ordered on
   * @throws rmm::out_of_range for an index >= size()
   * @throws rmm::cuda_error when the copy or the wait fails
   */
  void set_element(size_type element_index, value_type const& value, cuda_stream_view stream)
  {
    check_index(element_index, "set_element");
    RMM_CUDA_TRY(cudaMemcpyAsync(element_ptr(element_index), &value, sizeof(value), cudaMemcpyDefault, stream.value()));
    stream.synchronize();
  }

  /**
   * @brief Element `element_index`, copied to the host on `stream` (waits for the stream).
   *
   * @param element_index the element's index, below size()
   * @param stream the stream the copy is ordered on
   * @return the element's value
   * @throws rmm::out_of_range for an index >= size()
   * @throws rmm::cuda_error when the copy or the wait fails
   */
  [[nodiscard]] value_type element(size_type element_index, cuda_stream_view stream) const
  {
    check_index(element_index, "element");
    value_type value;
    RMM_CUDA_TRY(cudaMemcpyAsync(&value, element_ptr(element_index), sizeof(value), cudaMemcpyDefault, stream.value()));
    stream.synchronize();
    return value;
  }

  /**
   * @brief The first element, copied to the host (waits for `stream`).
   *
   * @param stream the stream the copy is ordered on
   * @return the first element's value
   * @throws rmm::out_of_range when the vector is empty
   * @throws rmm::cuda_error when the copy or the wait fails
   */
  [[nodiscard]] value_type front_element(cuda_stream_view stream) const { return element(0, stream); }
  /**
   * @brief The last element, copied to the host (waits for `stream`).
   *
   * @param stream the stream the copy is ordered on
   * @return the last element's value
   * @throws rmm::out_of_range when the vector is empty
   * @throws rmm::cuda_error when the copy or the wait fails
   */
  [[nodiscard]] value_type back_element(cuda_stream_view stream) const
  {
    RMM_EXPECTS(!is_empty(), "device_uvector::back_element: the vector is empty", rmm::out_of_range);
    return element(size() - 1, stream);
  }

  /**
   * @brief Ensures capacity() >= new_capacity, reallocating on `stream` if needed (contents kept).
   *
   * @param new_capacity the least capacity wanted, in elements
   * @param stream the stream the reallocation and copy are ordered on; becomes stream()
   * @throws rmm::out_of_memory when the resource runs out of memory or the elements' bytes exceed
   * mr::max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when the device cannot be made current or the copy fails
   */
  void reserve(size_type new_capacity, cuda_stream_view stream)
  {
    storage_.reserve(detail::element_bytes<T>(new_capacity, "device_uvector"), stream);
  }
  /**
   * @brief Sets size() to `new_size`; grows the allocation only beyond capacity().
   *
   * New elements are uninitialized; shrinking keeps the memory (see shrink_to_fit).
   *
   * @param new_size the new number of elements
   * @param stream the stream a reallocation and copy are ordered on; becomes stream()
   * @throws rmm::out_of_memory when the resource runs out of memory or the elements' bytes exceed
   * mr::max_allocation_size
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when the device cannot be made current or the copy fails
   */
  void resize(size_type new_size, cuda_stream_view stream)
  {
    storage_.resize(detail::element_bytes<T>(new_size, "device_uvector"), stream);
  }
  /**
   * @brief Reallocates on `stream` so capacity() == size().
   *
   * @param stream the stream the reallocation and copy are ordered on; becomes stream()
   * @throws rmm::out_of_memory when the resource runs out of memory
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when the device cannot be made current or the copy fails
   */
  void shrink_to_fit(cuda_stream_view stream) { storage_.shrink_to_fit(stream); }

  /**
   * @brief Hands the memory over as a device_buffer; the vector is left empty.
   *
   * @return the buffer, with the vector's stream, resource and device
   */
  [[nodiscard]] device_buffer release() noexcept { return std::move(storage_); }

  /**
   * @brief The number of elements the allocation holds.
   *
   * @return the capacity in elements, at least size()
   */
  [[nodiscard]] size_type capacity() const noexcept { return storage_.capacity() / sizeof(value_type); }
  /**
   * @brief The number of elements.
   *
   * @return the size in elements
   */
  [[nodiscard]] size_type size() const noexcept { return storage_.size() / sizeof(value_type); }
  /**
   * @brief The number of elements, signed.
   *
   * @return the size in elements
   */
  [[nodiscard]] std::int64_t ssize() const noexcept { return static_cast<std::int64_t>(size()); }
  /**
   * @brief Whether size() is 0.
   *
   * @return true when the vector holds no elements
   */
  [[nodiscard]] bool is_empty() const noexcept { return size() == 0; }

  /**
   * @brief The elements' device memory.
   *
   * @return a device pointer to the first element; null when nothing is allocated
   */
  [[nodiscard]] pointer data() noexcept { return static_cast<pointer>(storage_.data()); }
  /**
   * @brief The elements' device memory.
   *
   * @return a device pointer to the first element; null when nothing is allocated
   */
  [[nodiscard]] const_pointer data() const noexcept { return static_cast<const_pointer>(storage_.data()); }

  // Iterators are raw device pointers: pass them to kernels or to Thrust with a device policy.
  /**
   * @brief The first element.
   *
   * @return a device pointer to it
   */
  [[nodiscard]] iterator begin() noexcept { return data(); }
  /**
   * @brief The first element.
   *
   * @return a device pointer to it
   */
  [[nodiscard]] const_iterator begin() const noexcept { return data(); }
  /**
   * @brief The first element.
   *
   * @return a device pointer to it
   */
  [[nodiscard]] const_iterator cbegin() const noexcept { return data(); }
  /**
   * @brief One past the last element.
   *
   * @return a device pointer to it
   */
  [[nodiscard]] iterator end() noexcept { return data() + size(); }
  /**
   * @brief One past the last element.
   *
   * @return a device pointer to it
   */
  [[nodiscard]] const_iterator end() const noexcept { return data() + size(); }
  /**
   * @brief One past the last element.
   *
   * @return a device pointer to it
   */
  [[nodiscard]] const_iterator cend() const noexcept { return data() + size(); }
  /**
   * @brief The last element, for iterating backwards.
   *
   * @return a reverse iterator over device pointers
   */
  [[nodiscard]] reverse_iterator rbegin() noexcept { return reverse_iterator{end()}; }
  /**
   * @brief The last element, for iterating backwards.
   *
   * @return a reverse iterator over device pointers
   */
  [[nodiscard]] const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator{cend()}; }
  /**
   * @brief The last element, for iterating backwards.
   *
   * @return a reverse iterator over device pointers
   */
  [[nodiscard]] const_reverse_iterator crbegin() const noexcept { return const_reverse_iterator{cend()}; }
  /**
   * @brief One before the first element, for iterating backwards.
   *
   * @return a reverse iterator over device pointers
   */
  [[nodiscard]] reverse_iterator rend() noexcept { return reverse_iterator{begin()}; }
  /**
   * @brief One before the first element, for iterating backwards.
   *
   * @return a reverse iterator over device pointers
   */
  [[nodiscard]] const_reverse_iterator rend() const noexcept { return const_reverse_iterator{cbegin()}; }
  /**
   * @brief One before the first element, for iterating backwards.
   *
   * @return a reverse iterator over device pointers
   */
  [[nodiscard]] const_reverse_iterator crend() const noexcept { return const_reverse_iterator{cbegin()}; }

  /// A view of the elements for device code (cuda::std::span works in kernels).
  [[nodiscard]] operator cuda::std::span<value_type>() noexcept  // NOLINT: implicit, as in RMM
  {
    return cuda::std::span<value_type>{data(), size()};
  }
  /// @brief A read-only view of the elements for device code.
  [[nodiscard]] operator cuda::std::span<value_type const>() const noexcept  // NOLINT
  {
    return cuda::std::span<value_type const>{data(), size()};
  }

  /**
   * @brief The stream the vector's allocations and deallocation are ordered on.
   *
   * @return the stream
   */
  [[nodiscard]] cuda_stream_view stream() const noexcept { return storage_.stream(); }
  /**
   * @brief Orders later work (reallocation, deallocation) on `stream`; the caller synchronizes
   * streams.
   *
   * @param stream the new stream
   */
  void set_stream(cuda_stream_view stream) noexcept { storage_.set_stream(stream); }
  /**
   * @brief The resource the memory comes from.
   *
   * @return a reference valid while the vector lives
   */
  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept { return storage_.memory_resource(); }
  /**
   * @brief The device the vector was created on.
   *
   * @return the device that was current at construction
   */
  [[nodiscard]] cuda_device_id device() const noexcept { return storage_.device(); }

 private:
  void check_index(size_type element_index, char const* what) const
  {
    if (element_index >= size()) [[unlikely]] {
      RMM_FAIL(std::string{"device_uvector::"} + what + ": index " + std::to_string(element_index) +
                 " is out of range for size " + std::to_string(size()),
               rmm::out_of_range);
    }
  }

  device_buffer storage_;
};

}  // namespace rmm
