#include "detail/stream_ordered_suballocator.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>

namespace rmm::mr {

namespace {

detail::suballocator_options arena_options(std::optional<std::size_t> arena_size, bool dump_log_on_failure)
{
  auto const size = arena_size.value_or(percent_of_free_device_memory(50));
  RMM_EXPECTS(size > 0, "arena_memory_resource: the arena size must not be 0");
  detail::suballocator_options options;
  options.name                       = "arena_memory_resource";
  options.initial_size               = size;
  options.maximum_size               = align_up(size, CUDA_ALLOCATION_ALIGNMENT);
  options.growth_step                = 0;  // the global arena has a fixed size
  options.per_thread_default_arenas  = true;
  options.log_state_on_failure       = dump_log_on_failure;
  return options;
}

}  // namespace

arena_memory_resource::arena_memory_resource(any_device_resource upstream,
                                             std::optional<std::size_t> arena_size,
                                             bool dump_log_on_failure)
  : arenas_{std::make_shared<detail::stream_ordered_suballocator<detail::coalescing_free_list>>(
      std::move(upstream), arena_options(arena_size, dump_log_on_failure), [] { return detail::coalescing_free_list{}; })}
{
}

device_async_resource_ref arena_memory_resource::get_upstream_resource() const noexcept { return arenas_->upstream(); }

suballocator_statistics arena_memory_resource::statistics() const { return arenas_->statistics(); }

void* arena_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return arenas_->allocate(bytes, stream);
}

void arena_memory_resource::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  arenas_->deallocate(ptr, bytes, stream);
}

bool arena_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* arena = dynamic_cast<arena_memory_resource const*>(&other);
  return arena != nullptr && arena->arenas_ == arenas_;
}

}  // namespace rmm::mr
