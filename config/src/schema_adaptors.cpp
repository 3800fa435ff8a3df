// SPDX-License-Identifier: Apache-2.0
// Adaptors: wrap their upstream and add a behaviour.

#include "layer_values.hpp"
#include "schema_parts.hpp"

#include <rmm/config/file_name_pattern.hpp>

#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <unistd.h>

namespace rmm::config::detail {

namespace {

using rmm::mr::any_device_resource;
using upstream_t = std::optional<any_device_resource>;

constexpr std::int64_t default_alignment = 256;
constexpr std::int64_t largest_alignment = std::int64_t{1} << 30;

template <class Adaptor>
any_device_resource build_plain(layer_description const&, build_context const&, upstream_t upstream)
{
  return Adaptor{std::move(*upstream)};
}

any_device_resource build_logging(layer_description const& layer, build_context const& context, upstream_t upstream)
{
  auto const file =
    expand_file_name_pattern(*string_value(layer, "file"), static_cast<long>(::getpid()), context.device.value());
  return rmm::mr::logging_resource_adaptor{std::move(*upstream), file, bool_value(layer, "auto_flush")};
}

any_device_resource build_tracking(layer_description const& layer, build_context const&, upstream_t upstream)
{
  return rmm::mr::tracking_resource_adaptor{std::move(*upstream), bool_value(layer, "capture_stacks")};
}

any_device_resource build_limiting(layer_description const& layer, build_context const& context, upstream_t upstream)
{
  return rmm::mr::limiting_resource_adaptor{std::move(*upstream), *resolved_size(layer, "limit", context),
                                            *resolved_size(layer, "alignment", context)};
}

any_device_resource build_aligned(layer_description const& layer, build_context const& context, upstream_t upstream)
{
  return rmm::mr::aligned_resource_adaptor{std::move(*upstream), *resolved_size(layer, "alignment", context),
                                           *resolved_size(layer, "alignment_threshold", context)};
}

size_spec bytes(std::int64_t count)
{
  return size_spec{.bytes = static_cast<std::uint64_t>(count), .percent = 0, .is_percent = false};
}

layer_schema logging_schema()
{
  return {.type    = "logging",
          .kind    = layer_kind::adaptor,
          .summary = "writes every allocation and free as a CSV row (Thread,Time,Action,Pointer,Size,Stream)",
          .keys =
            {
              {.name        = "file",
               .kind        = value_kind::file_name_pattern,
               .description = "the CSV file (truncated); %p is replaced by the process id, %d by the device",
               .required    = true},
              {.name          = "auto_flush",
               .kind          = value_kind::boolean,
               .description   = "write and flush every row before the call returns (survives a crash; much slower)",
               .default_value = false},
            },
          .build = build_logging};
}

layer_schema statistics_schema()
{
  return {.type    = "statistics",
          .kind    = layer_kind::adaptor,
          .summary = "counts current, peak and total bytes and allocations",
          .keys    = {},
          .build   = build_plain<rmm::mr::statistics_resource_adaptor>};
}

layer_schema tracking_schema()
{
  return {.type    = "tracking",
          .kind    = layer_kind::adaptor,
          .summary = "remembers every outstanding allocation (to find leaks)",
          .keys =
            {
              {.name          = "capture_stacks",
               .kind          = value_kind::boolean,
               .description   = "record the call stack of every allocation (slow)",
               .default_value = false},
            },
          .build = build_tracking};
}

layer_schema limiting_schema()
{
  return {.type    = "limiting",
          .kind    = layer_kind::adaptor,
          .summary = "refuses allocations that would take the total allocated through it past a limit",
          .keys =
            {
              {.name        = "limit",
               .kind        = value_kind::size_or_percent,
               .description = "the most bytes allocated through this layer at any time",
               .required    = true,
               .minimum     = 1},
              {.name          = "alignment",
               .kind          = value_kind::size,
               .description   = "each allocation counts as its size rounded up to this power of two",
               .default_value = bytes(default_alignment),
               .minimum       = 1,
               .maximum       = largest_alignment,
               .power_of_two  = true},
            },
          .build = build_limiting};
}

layer_schema aligned_schema()
{
  return {.type    = "aligned",
          .kind    = layer_kind::adaptor,
          .summary = "gives large allocations an alignment above 256 bytes (for example 4 KiB for GPUDirect Storage)",
          .keys =
            {
              {.name         = "alignment",
               .kind         = value_kind::size,
               .description  = "the alignment, a power of two",
               .required     = true,
               .minimum      = 1,
               .maximum      = largest_alignment,
               .power_of_two = true},
              {.name          = "alignment_threshold",
               .kind          = value_kind::size,
               .description   = "only allocations of at least this many bytes are aligned; smaller ones pass through",
               .default_value = bytes(0),
               .minimum       = 0},
            },
          .build = build_aligned};
}

layer_schema thread_safe_schema()
{
  return {.type    = "thread_safe",
          .kind    = layer_kind::adaptor,
          .summary = "serializes every call to its upstream with one lock",
          .keys    = {},
          .build   = build_plain<rmm::mr::thread_safe_resource_adaptor>};
}

layer_schema prefetch_schema()
{
  return {.type    = "prefetch",
          .kind    = layer_kind::adaptor,
          .summary = "prefetches each new allocation to the device (useful over managed memory)",
          .keys    = {},
          .build   = build_plain<rmm::mr::prefetch_resource_adaptor>};
}

layer_schema failure_callback_schema()
{
  return {.type             = "failure_callback",
          .kind             = layer_kind::code_only,
          .summary          = "calls a user function when an allocation fails",
          .code_only_reason = "failure_callback_resource_adaptor calls a C++ function and can only be built in code"};
}

}  // namespace

std::vector<layer_schema> adaptor_schemas()
{
  return {logging_schema(), statistics_schema(),  tracking_schema(), limiting_schema(),
          aligned_schema(), thread_safe_schema(), prefetch_schema(), failure_callback_schema()};
}

}  // namespace rmm::config::detail
