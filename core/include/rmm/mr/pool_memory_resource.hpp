#pragma once

#include <rmm/mr/detail/suballocator_resource.hpp>
#include <rmm/mr/suballocator_statistics.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <optional>

namespace rmm::mr {

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
};

class pool_memory_resource final
  : public detail::suballocator_resource<pool_memory_resource, detail::coalescing_free_list> {
 public:
  /// `upstream` is held (shared) by the pool; pass a resource_ref to keep ownership elsewhere.
  pool_memory_resource(any_device_resource upstream,
                       std::size_t initial_pool_size,
                       std::optional<std::size_t> maximum_pool_size = std::nullopt,
                       pool_growth growth                           = pool_growth::automatic);

  /// What the pool holds now: reserved (and peak reserved), allocated and free bytes, free
  /// blocks, the largest free block, upstream chunks, stream arenas; fragmentation() derives from
  /// them (<rmm/mr/suballocator_statistics.hpp>).
  using suballocator_resource::statistics;

  /// Bytes currently reserved from upstream.
  [[nodiscard]] std::size_t pool_size() const noexcept;
  [[nodiscard]] std::optional<std::size_t> maximum_pool_size() const noexcept;

  /// Synchronizes the device and returns every completely free upstream chunk (or, when growing
  /// contiguously, the free memory at the end of the range). Returns the number of bytes given back.
  std::size_t release();

  /// True when the pool grows by mapping memory into one contiguous address range.
  [[nodiscard]] bool grows_contiguously() const noexcept;

 private:
  static std::shared_ptr<engine_type> make_engine(any_device_resource upstream,
                                                  std::size_t initial_pool_size,
                                                  std::optional<std::size_t> maximum_pool_size,
                                                  pool_growth growth);
};

}  // namespace rmm::mr
