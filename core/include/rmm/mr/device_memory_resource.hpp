// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/detail/cccl.hpp>

#include <cstddef>
#include <limits>

namespace rmm::mr {

/**
 * The largest size an allocation can have: PTRDIFF_MAX bytes, as for any object in C++. No
 * address space is larger, so a larger request is always a bug in how the size was computed (an
 * unsigned `n - 1` with n == 0, an overflowed `n * sizeof(T)`). Every size up to it can be rounded
 * up to a power-of-two alignment, or padded by one, without overflowing std::size_t: that is what
 * lets resources do such arithmetic unchecked once allocate() has refused larger sizes.
 */
inline constexpr std::size_t max_allocation_size = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());

/**
 * Base class of rmm's device memory resources, and the way to write your own: derive and
 * implement do_allocate / do_deallocate (and do_is_equal when two distinct objects can free each
 * other's memory).
 *
 * The public interface is the stream-ordered one of the RMM documentation:
 *   allocate(stream, bytes, alignment = 256)     deallocate(stream, ptr, bytes, alignment)
 *   allocate_sync(bytes, alignment = 256)        deallocate_sync(ptr, bytes, alignment)
 * which is CCCL's cuda::mr::resource concept: every resource satisfies
 * cuda::mr::resource_with<R, cuda::mr::device_accessible>, so a cuda::mr::resource_ref or
 * any_resource can hold it. Those need the concrete, copyable type: a reference to this base class
 * cannot be held, as it is abstract.
 *
 * Alignment: any power of two up to CUDA_ALLOCATION_ALIGNMENT (256) is honoured by every
 * resource; larger alignments throw rmm::logic_error (wrap the resource in an
 * aligned_resource_adaptor for those). Other values throw rmm::logic_error.
 *
 * Sizes above max_allocation_size throw rmm::out_of_memory, naming the size and the resource,
 * before do_allocate is called: no resource or adaptor ever sees them, counts them or passes them
 * on.
 */
class device_memory_resource {
 public:
  /// @brief Default constructor
  device_memory_resource() = default;
  /// @brief Default copy constructor
  device_memory_resource(device_memory_resource const&) = default;
  /// @brief Default move constructor
  device_memory_resource(device_memory_resource&&) = default;
  /**
   * @brief Default copy assignment operator
   *
   * @return a reference to this resource
   */
  device_memory_resource& operator=(device_memory_resource const&) = default;
  /**
   * @brief Default move assignment operator
   *
   * @return a reference to this resource
   */
  device_memory_resource& operator=(device_memory_resource&&) = default;
  /// @brief Default virtual destructor
  virtual ~device_memory_resource() = default;

  /**
   * @brief Allocates `bytes` usable on `stream` without synchronization.
   *
   * @param stream the stream the allocation is ordered on
   * @param bytes the size in bytes
   * @param alignment a power of two up to CUDA_ALLOCATION_ALIGNMENT
   * @return the memory; may be null when `bytes` is 0
   * @throws rmm::logic_error when `alignment` is not a power of two
   * @throws rmm::bad_alloc when `alignment` exceeds CUDA_ALLOCATION_ALIGNMENT
   * @throws rmm::out_of_memory when memory is exhausted or `bytes` exceeds max_allocation_size
   * @throws rmm::bad_alloc for other allocation failures
   */
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    check_alignment(alignment);
    if (bytes > max_allocation_size) [[unlikely]] { reject_impossible_size(bytes); }
    return do_allocate(bytes, cuda_stream_view{stream});
  }

  /**
   * @brief Returns memory from allocate().
   *
   * @param stream the stream the memory was last used on
   * @param ptr what allocate() returned
   * @param bytes the size given to allocate()
   * @param alignment the alignment given to allocate()
   */
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    (void)alignment;
    do_deallocate(ptr, bytes, cuda_stream_view{stream});
  }

  /**
   * @brief Allocates memory that any stream may use as soon as the call returns.
   *
   * @param bytes the size in bytes
   * @param alignment a power of two up to CUDA_ALLOCATION_ALIGNMENT
   * @return the memory; may be null when `bytes` is 0
   * @throws rmm::logic_error when `alignment` is not a power of two
   * @throws rmm::bad_alloc when `alignment` exceeds CUDA_ALLOCATION_ALIGNMENT
   * @throws rmm::out_of_memory when memory is exhausted or `bytes` exceeds max_allocation_size
   * @throws rmm::bad_alloc for other allocation failures
   * @throws rmm::cuda_error when waiting for the memory's pending work fails
   */
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    check_alignment(alignment);
    if (bytes > max_allocation_size) [[unlikely]] { reject_impossible_size(bytes); }
    return do_allocate_sync(bytes);
  }

  /**
   * @brief Deallocates memory that is no longer used by any stream (all work using it has
   * completed).
   *
   * @param ptr what allocate_sync() returned
   * @param bytes the size given to allocate_sync()
   * @param alignment the alignment given to allocate_sync()
   */
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    (void)alignment;
    do_deallocate_sync(ptr, bytes);
  }

  /**
   * @brief Whether memory allocated by `other` can be deallocated by this resource and vice versa.
   *
   * @param other the resource to compare with
   * @return true when the two resources can free each other's memory
   */
  [[nodiscard]] bool is_equal(device_memory_resource const& other) const noexcept
  {
    return this == &other || do_is_equal(other);
  }
  /**
   * @brief Whether `lhs` and `rhs` can free each other's memory, as lhs.is_equal(rhs).
   *
   * @param lhs a resource
   * @param rhs the resource to compare with
   * @return lhs.is_equal(rhs)
   */
  friend bool operator==(device_memory_resource const& lhs, device_memory_resource const& rhs) noexcept
  {
    return lhs.is_equal(rhs);
  }

  /// @brief Gives every resource the cuda::mr::device_accessible property: its memory is usable
  /// from device code.
  friend void get_property(device_memory_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  static void check_alignment(std::size_t alignment)
  {
    if (alignment > CUDA_ALLOCATION_ALIGNMENT || !is_pow2(alignment)) [[unlikely]] { reject_alignment(alignment); }
  }
  [[noreturn]] static void reject_alignment(std::size_t alignment);
  /// Throws rmm::out_of_memory naming `bytes` and this resource's type.
  [[noreturn]] void reject_impossible_size(std::size_t bytes) const;

  /// Allocates at least `bytes`, aligned to CUDA_ALLOCATION_ALIGNMENT, usable on `stream`.
  virtual void* do_allocate(std::size_t bytes, cuda_stream_view stream) = 0;
  /// Frees memory from do_allocate. Must not throw.
  virtual void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept = 0;
  /// allocate_sync: by default do_allocate on the default stream, then a synchronization of that
  /// stream. Resources that can hand out memory with no pending work directly override it.
  virtual void* do_allocate_sync(std::size_t bytes);
  /// deallocate_sync: by default do_deallocate on the default stream.
  virtual void do_deallocate_sync(void* ptr, std::size_t bytes) noexcept
  {
    do_deallocate(ptr, bytes, cuda_stream_view{});
  }
  /// Default: equal only to itself.
  [[nodiscard]] virtual bool do_is_equal(device_memory_resource const& other) const noexcept { return this == &other; }
};

}  // namespace rmm::mr
