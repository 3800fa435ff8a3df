// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/mr/detail/suballocator_resource.hpp>
#include <rmm/mr/suballocator_statistics.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <optional>

namespace rmm::mr {

/// How a pool gets more memory.
enum class pool_growth {
  /// Virtual memory when the upstream is a cuda_memory_resource (and the device supports it), the
  /// upstream otherwise.
  automatic,
  /// Map device memory at the end of one reserved address range (CUDA virtual memory management),
  /// whatever the upstream: free memory coalesces across growth steps. The upstream then serves
  /// nothing (adaptors between the pool and the device see no growth). Refused with
  /// rmm::logic_error where the device cannot do it.
  virtual_memory,
  /// Separate allocations from the upstream.
  upstream,
  /// As virtual_memory, and before mapping new memory the pool moves idle free granules from the
  /// middle of its range to the end (growth steps up to 64 MiB are mapped one 2 MiB granule at a
  /// time so that they can move): fragmentation then costs addresses instead of device memory, at
  /// the price of remapping when a request fits nowhere. Over its life the pool moves at most four
  /// times the bytes it mapped, then maps new memory instead: a workload that needs a new
  /// contiguous block at every step stops paying for moves at every step
  /// (suballocator_statistics::moved_bytes says how much moved).
  remapping,
};

/**
 * Coalescing, stream-ordered pool sub-allocator over an upstream resource.
 *
 * - Reserves `initial_pool_size` from upstream at construction and grows on demand (in steps of
 *   at least 32 MiB) up to `maximum_pool_size`, if given. release() gives completely free upstream
 *   chunks back; the destructor gives everything back.
 * - Over a cuda_memory_resource upstream (or with pool_growth::virtual_memory), on devices with
 *   virtual memory management, the pool does not call cudaMalloc: it reserves one address range and maps device memory
 * at its end as it grows, so free memory coalesces across growth steps and a request is met by extending the free block
 * at the end (grows_contiguously() says which way the pool grows). release() then unmaps the free memory at the end of
 * the range.
 * - Memory freed on a stream is reused on that stream at once; another stream gets it only after
 *   waiting on an event recorded on the freeing stream (never a device synchronization), and only
 *   when the stream's own free memory and the pool's clean reserve cannot serve it. As a last
 *   resort before reporting out of memory, the pool synchronizes the device once and coalesces all
 *   free memory across streams.
 * - Block search is good-fit in O(1) (size classes 1/32 of a power of two wide): it costs the same
 *   with 16 free holes as with 65,536.
 * - Threads allocating on different streams do not contend for a lock.
 * - Out of memory throws rmm::out_of_memory saying what was asked, what the pool holds, its free
 *   bytes and blocks, the largest free block and the fragmentation; statistics() reports the same
 *   figures at any time.
 *
 * Copies share the pool. Sizes are rounded up to multiples of 256 bytes.
 */
class pool_memory_resource final
  : public detail::suballocator_resource<pool_memory_resource, detail::coalescing_free_list> {
 public:
  /**
   * @brief Reserves `initial_pool_size` bytes on the current device.
   *
   * @param upstream the resource the pool grows from, held (shared) by the pool; pass a
   * resource_ref to keep ownership elsewhere
   * @param initial_pool_size bytes reserved at construction (rounded up to 256); 0 reserves nothing
   * @param maximum_pool_size the most bytes the pool may hold (default: no limit)
   * @param growth how the pool gets more memory
   * @throws rmm::logic_error when the initial size exceeds the maximum, or `growth` is
   * pool_growth::virtual_memory and the device cannot do it
   * @throws rmm::out_of_memory when the initial size exceeds max_allocation_size or cannot be
   * reserved
   * @throws rmm::bad_alloc when reserving the initial size fails for another reason
   * @throws rmm::cuda_error when there is no usable device or a CUDA call fails
   */
  pool_memory_resource(any_device_resource upstream,
                       std::size_t initial_pool_size,
                       std::optional<std::size_t> maximum_pool_size = std::nullopt,
                       pool_growth growth                           = pool_growth::automatic);

  /**
   * @brief What the pool holds now.
   *
   * Reserved (and peak reserved), allocated and free bytes, free blocks, the largest free block,
   * upstream chunks, stream arenas; fragmentation() derives from them
   * (<rmm/mr/suballocator_statistics.hpp>).
   *
   * @return the figures, taken together
   */
  using suballocator_resource::statistics;

  /**
   * @brief Bytes currently reserved from upstream.
   *
   * @return the reserved bytes, allocated or free
   */
  [[nodiscard]] std::size_t pool_size() const noexcept;
  /**
   * @brief The most bytes the pool may hold.
   *
   * @return the maximum given at construction; empty when there is none
   */
  [[nodiscard]] std::optional<std::size_t> maximum_pool_size() const noexcept;

  /**
   * @brief Gives back every completely free upstream chunk (or, when growing contiguously, the
   * free memory at the end of the range), after synchronizing the device.
   *
   * @return the number of bytes given back
   * @throws rmm::cuda_error when the device synchronization fails
   */
  std::size_t release();

  /**
   * @brief Whether the pool grows by mapping memory into one contiguous address range.
   *
   * @return true for virtual-memory growth, false when the pool grows from its upstream
   */
  [[nodiscard]] bool grows_contiguously() const noexcept;

 private:
  static std::shared_ptr<engine_type> make_engine(any_device_resource upstream,
                                                  std::size_t initial_pool_size,
                                                  std::optional<std::size_t> maximum_pool_size,
                                                  pool_growth growth);
};

static_assert(cuda::mr::resource_with<pool_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
