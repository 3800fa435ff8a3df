#include "detail/stream_ordered_suballocator.hpp"

#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

namespace rmm::mr {

namespace {

/// Grow in steps of at least this much: fewer, larger chunks coalesce better and cost fewer
/// upstream calls (the CUDA driver's own pools reserve 32 MiB at a time).
constexpr std::size_t pool_growth_step = std::size_t{32} << 20;

detail::suballocator_options pool_options(any_device_resource const& upstream,
                                          std::size_t initial_size,
                                          std::optional<std::size_t> maximum_size)
{
  detail::suballocator_options options;
  options.name         = "pool_memory_resource";
  options.initial_size = initial_size;
  options.maximum_size = maximum_size;
  options.growth_step  = pool_growth_step;
  // Over plain cudaMalloc, map memory into one address range instead: the same device memory,
  // but free memory coalesces across growth steps.
  options.expandable = upstream.target<cuda_memory_resource>() != nullptr;
  return options;
}

}  // namespace

pool_memory_resource::pool_memory_resource(any_device_resource upstream,
                                           std::size_t initial_pool_size,
                                           std::optional<std::size_t> maximum_pool_size)
  : pool_{std::make_shared<detail::stream_ordered_suballocator<detail::coalescing_free_list>>(
      upstream,
      pool_options(upstream, initial_pool_size, maximum_pool_size),
      [] { return detail::coalescing_free_list{}; })}
{
}

std::size_t pool_memory_resource::pool_size() const noexcept { return pool_->reserved_bytes(); }

std::optional<std::size_t> pool_memory_resource::maximum_pool_size() const noexcept
{
  return pool_->options().maximum_size;
}

device_async_resource_ref pool_memory_resource::get_upstream_resource() const noexcept { return pool_->upstream(); }

suballocator_statistics pool_memory_resource::statistics() const { return pool_->statistics(); }

std::size_t pool_memory_resource::release() { return pool_->release(); }

bool pool_memory_resource::grows_contiguously() const noexcept { return pool_->grows_contiguously(); }

void* pool_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return pool_->allocate(bytes, stream);
}

void pool_memory_resource::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  pool_->deallocate(ptr, bytes, stream);
}

bool pool_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* pool = dynamic_cast<pool_memory_resource const*>(&other);
  return pool != nullptr && pool->pool_ == pool_;
}

}  // namespace rmm::mr
