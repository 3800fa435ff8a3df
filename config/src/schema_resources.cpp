// SPDX-License-Identifier: Apache-2.0
// Resources that allocate from CUDA (or the host) themselves: the bottom of every stack.

#include "layer_values.hpp"
#include "schema_parts.hpp"

#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <fmt/format.h>

namespace rmm::config::detail {

namespace {

using rmm::mr::any_device_resource;
using upstream_t = std::optional<any_device_resource>;

// The upstream parameter is the builders' common signature; resources take none.
template <class Resource>
any_device_resource build_plain(layer_description const&,
                                build_context const&,
                                upstream_t)  // NOLINT(performance-unnecessary-value-param)
{
  return Resource{};
}

void check_system_on_device(layer_description const& layer, build_context const& context)
{
  if (!rmm::mr::is_system_memory_supported(context.device)) {
    throw config_error{layer.location,
                       fmt::format("type \"{}\" on device {}, which cannot access pageable host memory "
                                   "(no HMM or ATS)",
                                   layer.type(), context.device.value()),
                       "a bottom layer the device supports: \"cuda\", \"cuda_async\" or \"managed\""};
  }
}

any_device_resource build_sam_headroom(layer_description const& layer,
                                       build_context const& context,
                                       upstream_t)  // NOLINT(performance-unnecessary-value-param)
{
  return rmm::mr::sam_headroom_memory_resource{resolved_size(layer, "headroom", context).value_or(0)};
}

rmm::mr::cuda_async_memory_resource::allocation_handle_type handle_type(std::string const& name)
{
  using handle = rmm::mr::cuda_async_memory_resource::allocation_handle_type;
  if (name == "posix_file_descriptor") { return handle::posix_file_descriptor; }
  if (name == "fabric") { return handle::fabric; }
  return handle::none;
}

void check_cuda_async_on_device(layer_description const& layer, build_context const& context)
{
  check_fits_device(layer, "initial_pool_size", context);
}

any_device_resource build_cuda_async(layer_description const& layer,
                                     build_context const& context,
                                     upstream_t)  // NOLINT(performance-unnecessary-value-param)
{
  auto const initial   = resolved_size(layer, "initial_pool_size", context);
  auto const threshold = resolved_size(layer, "release_threshold", context);
  auto const handle    = string_value(layer, "export_handle_type");
  return rmm::mr::cuda_async_memory_resource{initial ? std::optional<std::size_t>{*initial} : std::nullopt,
                                             threshold ? std::optional<std::size_t>{*threshold} : std::nullopt,
                                             handle ? std::optional{handle_type(*handle)} : std::nullopt};
}

}  // namespace

std::vector<layer_schema> resource_schemas()
{
  return {
    {.type    = "cuda",
     .kind    = layer_kind::resource,
     .summary = "device memory from cudaMalloc / cudaFree",
     .keys    = {},
     .build   = build_plain<rmm::mr::cuda_memory_resource>},
    {.type    = "managed",
     .kind    = layer_kind::resource,
     .summary = "unified memory from cudaMallocManaged (can exceed device memory; pages migrate on demand)",
     .keys    = {},
     .build   = build_plain<rmm::mr::managed_memory_resource>},
    {.type    = "pinned_host",
     .kind    = layer_kind::resource,
     .summary = "page-locked host memory from cudaMallocHost: kernels reach it over the bus, slowly; for "
                "data that does not fit on the device or is mostly read by the host",
     .keys    = {},
     .build   = build_plain<rmm::mr::pinned_host_memory_resource>},
    {.type            = "system",
     .kind            = layer_kind::resource,
     .summary         = "pageable host memory from malloc; needs HMM or ATS (not available on the H200 hosts)",
     .keys            = {},
     .check_on_device = check_system_on_device,
     .build           = build_plain<rmm::mr::system_memory_resource>},
    {.type    = "sam_headroom",
     .kind    = layer_kind::resource,
     .summary = "pageable host memory as \"system\", each allocation preferring the device up to its free memory "
                "less a headroom, the host for the rest; needs HMM or ATS",
     .keys =
       {
         {.name          = "headroom",
          .kind          = value_kind::size_or_percent,
          .description   = "device memory each allocation leaves free",
          .default_value = size_spec{.bytes = 0, .percent = 0, .is_percent = false},
          .minimum       = 0},
       },
     .check_on_device = check_system_on_device,
     .build           = build_sam_headroom},
    {.type    = "cuda_async",
     .kind    = layer_kind::resource,
     .summary = "stream-ordered allocation from a CUDA memory pool of its own (cudaMallocFromPoolAsync)",
     .keys =
       {
         {.name        = "initial_pool_size",
          .kind        = value_kind::size_or_percent,
          .description = "bytes reserved when the resource is built",
          .when_unset  = "nothing reserved up front",
          .minimum     = 1},
         {.name        = "release_threshold",
          .kind        = value_kind::size_or_percent,
          .description = "bytes the pool keeps at synchronization points instead of returning them to the driver",
          .when_unset  = "the device's total memory (never gives memory back)",
          .minimum     = 0},
         {.name          = "export_handle_type",
          .kind          = value_kind::choice,
          .description   = "makes the pool's memory exportable to other processes (IPC)",
          .default_value = std::string{"none"},
          .choices       = {"none", "posix_file_descriptor", "fabric"}},
       },
     .check_on_device = check_cuda_async_on_device,
     .build           = build_cuda_async},
    {.type    = "cuda_async_managed",
     .kind    = layer_kind::resource,
     .summary = "stream-ordered managed memory from the device's default managed pool (CUDA 13 driver, concurrent "
                "managed access)",
     .keys    = {},
     .build   = build_plain<rmm::mr::cuda_async_managed_memory_resource>},
    {.type             = "cuda_async_view",
     .kind             = layer_kind::code_only,
     .summary          = "allocation from an existing cudaMemPool_t",
     .code_only_reason = "cuda_async_view_memory_resource wraps a cudaMemPool_t handle that only a running program "
                         "has; build it in code, or use \"cuda_async\" for a pool of its own"},
    {.type             = "callback",
     .kind             = layer_kind::code_only,
     .summary          = "allocation through user functions",
     .code_only_reason = "callback_memory_resource calls C++ functions and can only be built in code"},
  };
}

}  // namespace rmm::config::detail
