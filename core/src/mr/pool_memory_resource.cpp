// SPDX-License-Identifier: Apache-2.0
#include "detail/stream_ordered_suballocator.hpp"

#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/detail/resource_cast.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

namespace rmm::mr {

namespace {

/// Grow in steps of at least this much: fewer, larger chunks coalesce better and cost fewer
/// upstream calls (the CUDA driver's own pools reserve 32 MiB at a time).
constexpr std::size_t pool_growth_step = std::size_t{32} << 20;

detail::suballocator_options pool_options(any_device_resource const& upstream,
                                          std::size_t initial_size,
                                          std::optional<std::size_t> maximum_size,
                                          pool_growth growth)
{
  detail::suballocator_options options;
  options.name         = "pool_memory_resource";
  options.initial_size = initial_size;
  options.maximum_size = maximum_size;
  options.growth_step  = pool_growth_step;
  // Mapping memory into one address range gives the same device memory as cudaMalloc, but free
  // memory coalesces across growth steps.
  switch (growth) {
    case pool_growth::automatic:
      options.expandable = detail::resource_cast<cuda_memory_resource>(upstream) != nullptr;
      break;
    case pool_growth::virtual_memory:
      options.expandable         = true;
      options.require_expandable = true;
      break;
    case pool_growth::upstream: options.expandable = false; break;
    case pool_growth::remapping:
      options.expandable          = true;
      options.require_expandable  = true;
      options.remap_free_granules = true;
      break;
  }
  return options;
}

}  // namespace

std::shared_ptr<pool_memory_resource::engine_type> pool_memory_resource::make_engine(
  any_device_resource upstream,
  std::size_t initial_pool_size,
  std::optional<std::size_t> maximum_pool_size,
  pool_growth growth)
{
  auto const options = pool_options(upstream, initial_pool_size, maximum_pool_size, growth);
  return std::make_shared<engine_type>(std::move(upstream), options, [] { return detail::coalescing_free_list{}; });
}

pool_memory_resource::pool_memory_resource(any_device_resource upstream,
                                           std::size_t initial_pool_size,
                                           std::optional<std::size_t> maximum_pool_size,
                                           pool_growth growth)
  : suballocator_resource{make_engine(std::move(upstream), initial_pool_size, maximum_pool_size, growth)}
{
}

std::size_t pool_memory_resource::pool_size() const noexcept { return engine().reserved_bytes(); }

std::optional<std::size_t> pool_memory_resource::maximum_pool_size() const noexcept
{
  return engine().options().maximum_size;
}

std::size_t pool_memory_resource::release() { return engine().release(); }

bool pool_memory_resource::grows_contiguously() const noexcept { return engine().grows_contiguously(); }

}  // namespace rmm::mr
