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
{
  auto options            = fixed_size_options(block_size, blocks_to_preallocate);
  auto const rounded_size = options.granularity;
  blocks_                 = std::make_shared<detail::stream_ordered_suballocator<detail::fixed_block_store>>(
    std::move(upstream), std::move(options), [rounded_size] { return detail::fixed_block_store{rounded_size}; });
}

std::size_t fixed_size_memory_resource::get_block_size() const noexcept { return blocks_->options().granularity; }

device_async_resource_ref fixed_size_memory_resource::get_upstream_resource() const noexcept
{
  return blocks_->upstream();
}

suballocator_statistics fixed_size_memory_resource::statistics() const { return blocks_->statistics(); }

void* fixed_size_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return blocks_->allocate(bytes, stream);
}

void fixed_size_memory_resource::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  blocks_->deallocate(ptr, bytes, stream);
}

bool fixed_size_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* fixed = dynamic_cast<fixed_size_memory_resource const*>(&other);
  return fixed != nullptr && fixed->blocks_ == blocks_;
}

}  // namespace rmm::mr
