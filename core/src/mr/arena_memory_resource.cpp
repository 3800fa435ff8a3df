// SPDX-License-Identifier: Apache-2.0
#include "detail/stream_ordered_suballocator.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>

#include <fmt/format.h>

namespace rmm::mr {

namespace {

detail::suballocator_options arena_options(std::optional<std::size_t> arena_size,
                                           bool dump_log_on_failure,
                                           std::size_t shared_arena_threshold)
{
  auto const size = arena_size.value_or(percent_of_free_device_memory(50));
  RMM_EXPECTS(size > 0, "arena_memory_resource: the arena size must not be 0");
  // Checked before rounding: a size near 2^64 rounds up to 0, an arena of nothing.
  if (size > max_allocation_size - (CUDA_ALLOCATION_ALIGNMENT - 1)) {
    throw rmm::out_of_memory{fmt::format(
      "arena_memory_resource: an arena of {} can never be allocated: rounded up to a multiple of {} bytes it "
      "exceeds the {} bytes any allocation can have; use a smaller arena size",
      rmm::format_bytes_exact(size), CUDA_ALLOCATION_ALIGNMENT, max_allocation_size)};
  }
  detail::suballocator_options options;
  options.name                      = "arena_memory_resource";
  options.initial_size              = size;
  options.maximum_size              = align_up(size, CUDA_ALLOCATION_ALIGNMENT);
  options.growth_step               = 0;  // the global arena has a fixed size
  options.per_thread_default_arenas = true;
  // Large blocks on the default stream share one arena: freed by any thread, they coalesce.
  options.shared_arena_threshold = shared_arena_threshold;
  options.log_state_on_failure   = dump_log_on_failure;
  return options;
}

}  // namespace

arena_memory_resource::arena_memory_resource(any_device_resource upstream,
                                             std::optional<std::size_t> arena_size,
                                             bool dump_log_on_failure,
                                             std::size_t shared_arena_threshold)
  : suballocator_resource{
      std::make_shared<engine_type>(std::move(upstream),
                                    arena_options(arena_size, dump_log_on_failure, shared_arena_threshold),
                                    [] { return detail::coalescing_free_list{}; })}
{
}

}  // namespace rmm::mr
