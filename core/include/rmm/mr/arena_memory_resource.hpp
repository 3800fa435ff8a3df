// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/mr/detail/suballocator_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <optional>

namespace rmm::mr {

/**
 * A fixed-size global arena carved into per-thread and per-stream arenas.
 *
 * The global arena (`arena_size`, default half of the device's free memory) is reserved from
 * upstream at construction and never grows. Allocations on a non-default stream use that stream's
 * arena. On the default stream (0, cudaStreamLegacy), requests smaller than
 * `shared_arena_threshold` use the calling thread's arena, so threads allocating small blocks do
 * not contend; larger ones use one arena shared by all threads, to which they are also freed
 * whichever thread frees them, so large free blocks coalesce even when one thread allocates and
 * another frees (as autograd does). cudaStreamPerThread is a stream of its own in each thread and
 * keeps one arena per thread. Memory moves between arenas with the same rules as
 * pool_memory_resource (events across streams, one device synchronization before giving up), and
 * any thread may free any allocation. With `dump_log_on_failure`, an allocation failure also
 * writes every arena's state to the debug log.
 */
class arena_memory_resource final
  : public detail::suballocator_resource<arena_memory_resource, detail::coalescing_free_list> {
 public:
  /// Default of `shared_arena_threshold`.
  static constexpr std::size_t default_shared_arena_threshold = std::size_t{64} << 10;

  /**
   * @brief Reserves the global arena from `upstream`.
   *
   * @param upstream the resource the global arena comes from, shared by the arena
   * @param arena_size the global arena's bytes (default: half of the current device's free memory)
   * @param dump_log_on_failure write every arena's state to the debug log when an allocation fails
   * @param shared_arena_threshold on the default stream, the smallest request served by the arena
   * all threads share
   * @throws rmm::logic_error for an arena size of 0
   * @throws rmm::out_of_memory when the arena size (rounded up to 256 bytes) exceeds
   * max_allocation_size or the upstream cannot provide it
   * @throws rmm::bad_alloc when the upstream fails for another reason
   * @throws rmm::cuda_error when there is no usable device or a CUDA call fails
   */
  explicit arena_memory_resource(any_device_resource upstream,
                                 std::optional<std::size_t> arena_size = std::nullopt,
                                 bool dump_log_on_failure              = false,
                                 std::size_t shared_arena_threshold    = default_shared_arena_threshold);
};

static_assert(cuda::mr::resource_with<arena_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
