// SPDX-License-Identifier: Apache-2.0
#include "detail/stream_ordered_suballocator.hpp"

#include <rmm/aligned.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>

#include <fmt/format.h>

namespace rmm::mr {

namespace {

detail::suballocator_options fixed_size_options(std::size_t block_size, std::size_t blocks_to_preallocate)
{
  RMM_EXPECTS(block_size > 0, "fixed_size_memory_resource: the block size must not be 0");
  RMM_EXPECTS(blocks_to_preallocate > 0, "fixed_size_memory_resource: blocks_to_preallocate must not be 0");
  // Checked before rounding: a block size near 2^64 rounds up to 0.
  if (block_size > max_allocation_size - (CUDA_ALLOCATION_ALIGNMENT - 1)) {
    throw rmm::out_of_memory{fmt::format(
      "fixed_size_memory_resource: a block size of {} can never be allocated: rounded up to a multiple of {} bytes "
      "it exceeds the {} bytes any allocation can have; use a smaller block size",
      rmm::format_bytes_exact(block_size), CUDA_ALLOCATION_ALIGNMENT, max_allocation_size)};
  }
  auto const rounded_block = align_up(block_size, CUDA_ALLOCATION_ALIGNMENT);
  if (blocks_to_preallocate > max_allocation_size / rounded_block) {
    throw rmm::out_of_memory{fmt::format(
      "fixed_size_memory_resource: blocks_to_preallocate = {} blocks of {} can never be allocated at once: together "
      "they exceed the {} bytes any allocation can have; preallocate fewer blocks",
      blocks_to_preallocate, rmm::format_bytes_exact(rounded_block), max_allocation_size)};
  }
  detail::suballocator_options options;
  options.name            = "fixed_size_memory_resource";
  options.granularity     = rounded_block;
  options.largest_request = options.granularity;
  options.growth_step     = options.granularity * blocks_to_preallocate;
  options.initial_size    = options.growth_step;
  return options;
}

}  // namespace

fixed_size_memory_resource::fixed_size_memory_resource(any_device_resource upstream,
                                                       std::size_t block_size,
                                                       std::size_t blocks_to_preallocate)
  : suballocator_resource{[&] {
      auto options            = fixed_size_options(block_size, blocks_to_preallocate);
      auto const rounded_size = options.granularity;
      return std::make_shared<engine_type>(std::move(upstream), std::move(options),
                                           [rounded_size] { return detail::fixed_block_store{rounded_size}; });
    }()}
{
}

std::size_t fixed_size_memory_resource::get_block_size() const noexcept { return engine().options().granularity; }

}  // namespace rmm::mr
