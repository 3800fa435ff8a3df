#include "detail/stream_ordered_suballocator.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>

namespace rmm::mr {

namespace {

detail::suballocator_options fixed_size_options(std::size_t block_size, std::size_t blocks_to_preallocate)
{
  RMM_EXPECTS(block_size > 0, "fixed_size_memory_resource: the block size must not be 0");
  RMM_EXPECTS(blocks_to_preallocate > 0, "fixed_size_memory_resource: blocks_to_preallocate must not be 0");
  detail::suballocator_options options;
  options.name            = "fixed_size_memory_resource";
  options.granularity     = align_up(block_size, CUDA_ALLOCATION_ALIGNMENT);
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
      return std::make_shared<engine_type>(
        std::move(upstream), std::move(options), [rounded_size] { return detail::fixed_block_store{rounded_size}; });
    }()}
{
}

std::size_t fixed_size_memory_resource::get_block_size() const noexcept { return engine().options().granularity; }

}  // namespace rmm::mr
