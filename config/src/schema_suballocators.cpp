// SPDX-License-Identifier: Apache-2.0
// Sub-allocators: carve the memory of their upstream.

#include "layer_values.hpp"
#include <rmm/format_bytes.hpp>
#include "schema_parts.hpp"

#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace rmm::config::detail {

namespace {

using rmm::mr::any_device_resource;
using upstream_t = std::optional<any_device_resource>;

// ---- pool ----------------------------------------------------------------------------------------

/// The pool reserves its initial size rounded up to its 256-byte granularity.
constexpr std::uint64_t pool_granularity = 256;

void check_pool_maximum(parameter const& initial, parameter const& maximum, std::optional<build_context> context)
{
  auto const* initial_size = std::get_if<size_spec>(&initial.value);
  auto const* maximum_size = std::get_if<size_spec>(&maximum.value);
  if (initial_size == nullptr || maximum_size == nullptr) { return; }
  std::uint64_t initial_bytes{};
  std::uint64_t maximum_bytes{};
  if (context) {
    initial_bytes = resolve_size(*initial_size, context->free_bytes);
    maximum_bytes = resolve_size(*maximum_size, context->free_bytes);
  } else if (!initial_size->is_percent && !maximum_size->is_percent) {
    initial_bytes = initial_size->bytes;
    maximum_bytes = maximum_size->bytes;
  } else if (initial_size->is_percent && maximum_size->is_percent) {
    // Percentages of the same free memory, each resolved to a multiple of the granularity.
    if (maximum_size->percent >= initial_size->percent) { return; }
    initial_bytes = 1;  // any maximum < initial
  } else {
    return;  // bytes against a percentage: checked on the device
  }
  // Sizes are below 2^63 (values are checked when read), so rounding up cannot overflow.
  auto const reserved = (initial_bytes + pool_granularity - 1) / pool_granularity * pool_granularity;
  if (maximum_bytes < reserved) {
    auto const& culprit  = set_last(initial, maximum);
    auto const elsewhere = [&](parameter const& p) {
      return &p == &culprit ? std::string{} : fmt::format(" ({})", p.location.to_string());
    };
    auto const rounding = reserved != initial_bytes && maximum_bytes >= initial_bytes
                            ? fmt::format(" rounded up to {} B (the pool's granularity)", reserved)
                            : std::string{};
    fail_at(culprit,
            fmt::format("{}{}, below {}{}{}", describe_size_setting(maximum, context), elsewhere(maximum),
                        describe_size_setting(initial, context), elsewhere(initial), rounding),
            "a maximum_size of at least initial_size rounded up to a multiple of 256 bytes, or no maximum_size");
  }
}

void check_pool(layer_description const& layer)
{
  check_pool_maximum(layer.at("initial_size"), layer.at("maximum_size"), std::nullopt);
}

void check_pool_on_device(layer_description const& layer, build_context const& context)
{
  check_fits_device(layer, "initial_size", context);
  check_pool_maximum(layer.at("initial_size"), layer.at("maximum_size"), context);
}

any_device_resource build_pool(layer_description const& layer, build_context const& context, upstream_t upstream)
{
  auto const maximum = resolved_size(layer, "maximum_size", context);
  // Unset: virtual memory whenever the stack allocates from cuda at its bottom, whatever adaptors
  // sit between the pool and it.
  auto const growth_key = string_value(layer, "growth");
  auto growth = context.bottom_type == "cuda" ? rmm::mr::pool_growth::virtual_memory : rmm::mr::pool_growth::upstream;
  if (growth_key) {
    growth = *growth_key == "virtual_memory" ? rmm::mr::pool_growth::virtual_memory
             : *growth_key == "remapping"    ? rmm::mr::pool_growth::remapping
                                             : rmm::mr::pool_growth::upstream;
  }
  return rmm::mr::pool_memory_resource{std::move(*upstream), *resolved_size(layer, "initial_size", context),
                                       maximum ? std::optional<std::size_t>{*maximum} : std::nullopt, growth};
}

// ---- arena ---------------------------------------------------------------------------------------

void check_arena_on_device(layer_description const& layer, build_context const& context)
{
  check_fits_device(layer, "arena_size", context);
}

any_device_resource build_arena(layer_description const& layer, build_context const& context, upstream_t upstream)
{
  // Unset: half of the free memory measured before the stack was built (the resource's own
  // default would measure after the layers below took their share).
  auto const size =
    resolved_size(layer, "arena_size", context)
      .value_or(resolve_size(size_spec{.bytes = 0, .percent = 50, .is_percent = true}, context.free_bytes));
  return rmm::mr::arena_memory_resource{std::move(*upstream), size, bool_value(layer, "dump_log_on_failure"),
                                        *resolved_size(layer, "shared_arena_threshold", context)};
}

// ---- fixed_size ----------------------------------------------------------------------------------

void check_fixed_size_on_device(layer_description const& layer, build_context const& context)
{
  auto const& block_setting = layer.at("block_size");
  auto const& count_setting = layer.at("blocks_to_preallocate");
  // Blocks are rounded up to 256 bytes; sizes are below 2^63, so that cannot overflow.
  auto const block  = (*resolved_size(layer, "block_size", context) + 255) / 256 * 256;
  auto const blocks = static_cast<std::uint64_t>(*integer_value(layer, "blocks_to_preallocate"));
  if (block > context.total_bytes) {  // no count of such blocks fits: the block size is wrong
    fail_at(block_setting, describe_size_setting(block_setting, context),
            fmt::format("a block size of at most the device's {} of memory (device {})",
                        rmm::format_bytes_short(context.total_bytes), context.device.value()));
  }
  if (block > context.total_bytes / blocks) {
    fail_at(set_last(block_setting, count_setting),
            fmt::format("{} and blocks_to_preallocate = {}: {} blocks of {} preallocated",
                        describe_size_setting(block_setting, context), blocks, blocks, rmm::format_bytes_short(block)),
            fmt::format("at most the device's {} preallocated in all (device {}): fewer or smaller blocks",
                        rmm::format_bytes_short(context.total_bytes), context.device.value()));
  }
}

any_device_resource build_fixed_size(layer_description const& layer, build_context const& context, upstream_t upstream)
{
  return rmm::mr::fixed_size_memory_resource{std::move(*upstream), *resolved_size(layer, "block_size", context),
                                             static_cast<std::size_t>(*integer_value(layer, "blocks_to_preallocate"))};
}

// ---- binning -------------------------------------------------------------------------------------

constexpr std::int64_t default_min_exponent = rmm::mr::binning_memory_resource::default_min_size_exponent;
constexpr std::int64_t default_max_exponent = rmm::mr::binning_memory_resource::default_max_size_exponent;
constexpr std::int64_t smallest_exponent    = 8;
constexpr std::int64_t largest_exponent     = 40;

void check_binning(layer_description const& layer)
{
  auto const& bins = layer.at("bins");
  auto const& min  = layer.at("min_size_exponent");
  auto const& max  = layer.at("max_size_exponent");
  if (bins.is_set()) {
    for (auto const* exponent : {&min, &max}) {
      if (exponent->is_set()) {
        auto const& culprit = set_last(bins, *exponent);
        auto const& other   = &culprit == &bins ? *exponent : bins;
        fail_at(culprit, fmt::format("{} together with {} ({})", culprit.key, other.key, other.location.to_string()),
                "either bins (an explicit list) or min_size_exponent/max_size_exponent (a range of powers of two)");
      }
    }
    return;
  }
  auto const min_exponent = integer_value(layer, "min_size_exponent").value_or(default_min_exponent);
  auto const max_exponent = integer_value(layer, "max_size_exponent").value_or(default_max_exponent);
  if (min_exponent > max_exponent) {
    auto const& culprit = min.is_set() && !max.is_set() ? min : set_last(min, max);
    fail_at(culprit, fmt::format("min_size_exponent = {} above max_size_exponent = {}", min_exponent, max_exponent),
            "min_size_exponent <= max_size_exponent (bins of 2^min to 2^max bytes)");
  }
}

/// The bin sizes a binning layer will have: the `bins` list, or powers of two between the exponents.
std::vector<std::uint64_t> bin_sizes_of(layer_description const& layer)
{
  auto bins = size_list_value(layer, "bins");
  if (bins.empty()) {
    auto const min_exponent = integer_value(layer, "min_size_exponent").value_or(default_min_exponent);
    auto const max_exponent = integer_value(layer, "max_size_exponent").value_or(default_max_exponent);
    for (auto e = min_exponent; e <= max_exponent; ++e) { bins.push_back(std::uint64_t{1} << e); }
  }
  return bins;
}

/// Every bin reserves a batch of its blocks from the upstream when the layer is built (at least 8
/// blocks, about 2 MiB for small bins): all of them together must fit the device.
void check_binning_on_device(layer_description const& layer, build_context const& context)
{
  auto const bins = bin_sizes_of(layer);
  std::uint64_t reserved{0};
  bool overflowed{false};
  for (auto const size : bins) {
    overflowed = overflowed || __builtin_add_overflow(
                                 reserved, rmm::mr::binning_memory_resource::default_bin_reservation(size), &reserved);
  }
  if (!overflowed && reserved <= context.total_bytes) { return; }
  // The largest bin makes the total too large: blame the key that sets it.
  auto const& bins_setting = layer.at("bins");
  auto const& culprit      = bins_setting.is_set() ? bins_setting : layer.at("max_size_exponent");
  auto const which_bins    = bins_setting.is_set()
                               ? fmt::format("bins up to {}", rmm::format_bytes_short(bins.back()))
                               : fmt::format("max_size_exponent = {} (bins up to {})",
                                             integer_value(layer, "max_size_exponent").value_or(default_max_exponent),
                                             rmm::format_bytes_short(bins.back()));
  throw config_error{culprit.is_set() ? culprit.location : layer.location,
                     fmt::format("{}, which reserve {} from the upstream when built", which_bins,
                                 overflowed ? std::string{"more than 16 EiB"} : rmm::format_bytes_short(reserved)),
                     fmt::format("bins that fit the device's {} (device {}): each bin reserves at least 8 of its "
                                 "blocks (about 2 MiB of small ones) when the layer is built",
                                 rmm::format_bytes_short(context.total_bytes), context.device.value())};
}

any_device_resource build_binning(layer_description const& layer, build_context const&, upstream_t upstream)
{
  auto const bins = size_list_value(layer, "bins");
  if (bins.empty()) {
    auto const min_exponent = integer_value(layer, "min_size_exponent").value_or(default_min_exponent);
    auto const max_exponent = integer_value(layer, "max_size_exponent").value_or(default_max_exponent);
    return rmm::mr::binning_memory_resource{std::move(*upstream), static_cast<std::int8_t>(min_exponent),
                                            static_cast<std::int8_t>(max_exponent)};
  }
  return rmm::mr::binning_memory_resource{std::move(*upstream), std::vector<std::size_t>(bins.begin(), bins.end())};
}

layer_schema pool_schema()
{
  return {
    .type    = "pool",
    .kind    = layer_kind::suballocator,
    .summary = "coalescing, stream-ordered pool that grows on demand (contiguously over cuda)",
    .keys =
      {
        {.name          = "initial_size",
         .kind          = value_kind::size_or_percent,
         .description   = "bytes reserved from the upstream when the pool is built (0: none, the pool grows on "
                          "first use)",
         .default_value = size_spec{.bytes = std::uint64_t{32} << 20, .percent = 0, .is_percent = false},
         .minimum       = 0},
        {.name        = "maximum_size",
         .kind        = value_kind::size_or_percent,
         .description = "the pool never holds more than this",
         .when_unset  = "no maximum: grows until the upstream is out of memory",
         .minimum     = 1},
        {.name = "growth",
         .kind = value_kind::choice,
         .description =
           "\"virtual_memory\": map device memory into one address range (free memory coalesces "
           "across growth steps; layers below the pool see none of it); \"remapping\": the same, and "
           "before mapping more, move idle free 2 MiB granules from the middle of the range to its end "
           "(less memory for fragmented workloads, remapping calls when a request fits nowhere; at most four times "
           "the bytes mapped move over the pool's life, then it maps instead); "
           "\"upstream\": allocate each growth step from the layer below",
         .when_unset = "virtual_memory when the stack's last layer is cuda, else upstream",
         .choices    = {"virtual_memory", "remapping", "upstream"}},
      },
    .check           = check_pool,
    .check_on_device = check_pool_on_device,
    .build           = build_pool};
}

layer_schema arena_schema()
{
  return {.type    = "arena",
          .kind    = layer_kind::suballocator,
          .summary = "fixed-size global arena split into per-thread and per-stream arenas; never grows",
          .keys =
            {
              {.name        = "arena_size",
               .kind        = value_kind::size_or_percent,
               .description = "bytes reserved from the upstream when the arena is built",
               .when_unset  = "50% of free device memory",
               .minimum     = 1},
              {.name          = "dump_log_on_failure",
               .kind          = value_kind::boolean,
               .description   = "on an allocation failure, write every arena's state to the debug log",
               .default_value = false},
              {.name          = "shared_arena_threshold",
               .kind          = value_kind::size,
               .description   = "default-stream requests of at least this size share one arena, whichever thread makes "
                                "them; smaller ones use the thread's own arena (0: all share one)",
               .default_value = size_spec{.bytes      = rmm::mr::arena_memory_resource::default_shared_arena_threshold,
                                          .percent    = 0,
                                          .is_percent = false},
               .minimum       = 0},
            },
          .check_on_device = check_arena_on_device,
          .build           = build_arena};
}

layer_schema fixed_size_schema()
{
  return {
    .type    = "fixed_size",
    .kind    = layer_kind::suballocator,
    .summary = "blocks of one size in O(1); larger requests fail",
    .keys =
      {
        {.name        = "block_size",
         .kind        = value_kind::size,
         .description = "size of every block (rounded up to a multiple of 256)",
         .default_value =
           size_spec{
             .bytes = rmm::mr::fixed_size_memory_resource::default_block_size, .percent = 0, .is_percent = false},
         .minimum = 1},
        {.name          = "blocks_to_preallocate",
         .kind          = value_kind::integer,
         .description   = "blocks taken from the upstream at a time (the first batch when built)",
         .default_value = static_cast<std::int64_t>(rmm::mr::fixed_size_memory_resource::default_blocks_to_preallocate),
         .minimum       = 1,
         .maximum       = std::int64_t{1} << 32},
      },
    .check_on_device = check_fixed_size_on_device,
    .build           = build_fixed_size};
}

layer_schema binning_schema()
{
  return {.type    = "binning",
          .kind    = layer_kind::suballocator,
          .summary = "small requests in fixed-size bins, larger ones fall through to the upstream",
          .keys =
            {
              {.name        = "min_size_exponent",
               .kind        = value_kind::integer,
               .description = "smallest bin is 2^min_size_exponent bytes",
               .when_unset  = "8 (256 B), unless bins is given",
               .minimum     = smallest_exponent,
               .maximum     = largest_exponent},
              {.name        = "max_size_exponent",
               .kind        = value_kind::integer,
               .description = "largest bin is 2^max_size_exponent bytes",
               .when_unset  = "20 (1 MiB), unless bins is given",
               .minimum     = smallest_exponent,
               .maximum     = largest_exponent},
              {.name        = "bins",
               .kind        = value_kind::size_list,
               .description = "explicit bin sizes, ascending, instead of the exponent range",
               .when_unset  = "the exponent range",
               .minimum     = 1,
               .maximum     = std::int64_t{1} << 40},
            },
          .check           = check_binning,
          .check_on_device = check_binning_on_device,
          .build           = build_binning};
}

}  // namespace

std::vector<layer_schema> suballocator_schemas()
{
  return {pool_schema(), arena_schema(), fixed_size_schema(), binning_schema()};
}

}  // namespace rmm::config::detail
