// SPDX-License-Identifier: Apache-2.0
#include "resource_stack.hpp"

#include <rmm/config/build.hpp>
#include <rmm/config/load.hpp>
#include <rmm/config/schema.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/detail/resource_cast.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace rmm::replay {

namespace {

using rmm::config::layer_kind;
using rmm::config::layer_schema;

/// Types a stack name may hold: those of the configuration that need no settings rmm-replay cannot
/// give them (no required keys, no C++ functions).
bool replayable(layer_schema const& schema)
{
  return schema.kind != layer_kind::code_only &&
         std::none_of(schema.keys.begin(), schema.keys.end(), [](auto const& key) { return key.required; });
}

std::vector<std::string_view> bottom_types()
{
  std::vector<std::string_view> types;
  for (auto const& schema : rmm::config::layer_schemas()) {
    if (schema.kind == layer_kind::resource && replayable(schema)) { types.push_back(schema.type); }
  }
  return types;
}

[[noreturn]] void refuse(std::string const& name, std::string const& why)
{
  throw unknown_resource{fmt::format("resource '{}': {}\n{}", name, why, known_stack_names())};
}

/// The configuration types of `name`, top first, with the bottom (cuda by default) last.
std::vector<std::string> parse_stack_name(std::string const& name, stack_settings const& settings)
{
  if (name == "binning") { return {"binning", "pool", "cuda"}; }
  std::vector<std::string_view> known;
  for (auto const& schema : rmm::config::layer_schemas()) { known.push_back(schema.type); }
  std::vector<std::string> types;
  std::size_t start = 0;
  bool bottom_seen  = false;
  while (start <= name.size()) {
    auto const end   = std::min(name.find('+', start), name.size());
    auto const token = std::string_view{name}.substr(start, end - start);
    start            = end + 1;
    if (token.empty()) { refuse(name, "empty part (two '+' in a row, or '+' at an end)"); }
    if (bottom_seen) {
      refuse(name, fmt::format("the bottom resource ({}) must come last", fmt::join(bottom_types(), ", ")));
    }
    auto const* schema = rmm::config::find_layer_schema(token);
    if (schema == nullptr) {
      auto const close = rmm::config::closest_match(token, known);
      refuse(name,
             fmt::format("unknown part '{}'{}", token, close ? fmt::format(" (did you mean '{}'?)", *close) : ""));
    }
    if (!replayable(*schema)) {
      refuse(name,
             fmt::format("'{}' needs settings a stack name cannot give (its required keys, or C++ functions)", token));
    }
    bottom_seen = schema->kind == layer_kind::resource;
    types.emplace_back(token);
  }
  if (!bottom_seen) { types.emplace_back("cuda"); }
  if (settings.simulated_device_size && types.back() != "cuda") {
    refuse(name,
           fmt::format("with --simulate-device-size the bottom is the simulated device, which stands in for cuda; "
                       "{} cannot be simulated",
                       types.back()));
  }
  return types;
}

/// The stack as the configuration writes it, with rmm-replay's settings on its layers.
std::string stack_toml(std::vector<std::string> const& types, stack_settings const& settings)
{
  std::string toml;
  for (auto const& type : types) {
    toml += fmt::format("[[resource]]\ntype = \"{}\"\n", type);
    if (type == "pool") {
      toml += fmt::format("initial_size = {}\n", settings.pool_initial_size);
      // What the configuration does over cuda, said explicitly: the counting adaptor that stands
      // in for cuda in build_stack would otherwise make the pool grow through it, in chunks.
      if (types.back() == "cuda" && !settings.simulated_device_size) {
        toml += fmt::format("growth = \"{}\"\n", settings.pool_growth.value_or("virtual_memory"));
      }
    }
    if (type == "arena") {
      // Unset: the configuration's default, half the free memory of the (real or simulated) device.
      if (settings.arena_size) { toml += fmt::format("arena_size = {}\n", *settings.arena_size); }
      if (settings.arena_shared_threshold) {
        toml += fmt::format("shared_arena_threshold = {}\n", *settings.arena_shared_threshold);
      }
    }
  }
  return toml;
}

std::string describe(std::vector<std::string> const& types, stack_settings const& settings)
{
  std::vector<std::string> parts(types.begin(), types.end());
  if (settings.simulated_device_size) {
    parts.back() = fmt::format("simulated device ({})", rmm::format_bytes(*settings.simulated_device_size));
  }
  return fmt::format("{}", fmt::join(parts, " over "));
}

/// What the stack holds from the device: what reaches the bottom resource, counted by an adaptor
/// standing in for it, plus what the pools that grow through virtual memory map themselves (past
/// every layer below them), sampled after each event.
class held_bytes_gauge final : public reserved_gauge {
 public:
  held_bytes_gauge(rmm::mr::statistics_resource_adaptor counter, std::vector<rmm::mr::pool_memory_resource> mapping)
    : counter_{std::move(counter)}, mapping_pools_{std::move(mapping)}  // shares the resources
  {
  }

  void sample() noexcept override
  {
    if (mapping_pools_.empty()) { return; }  // the counter's own peak says it all
    auto const now = current_bytes();
    auto seen      = sampled_peak_.load(std::memory_order_relaxed);
    while (now > seen && !sampled_peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {}
  }
  [[nodiscard]] std::size_t peak_bytes() const override
  {
    // The counter's peak also sees what a call held only while it ran (a logged failure that
    // succeeded and was freed at once).
    return std::max(sampled_peak_.load(), static_cast<std::size_t>(counter_.get_bytes_counter().peak));
  }
  [[nodiscard]] std::size_t current_bytes() const override
  {
    auto bytes = static_cast<std::size_t>(counter_.get_bytes_counter().value);
    for (auto const& pool : mapping_pools_) { bytes += pool.pool_size(); }
    return bytes;
  }
  [[nodiscard]] std::string method() const override
  {
    return mapping_pools_.empty()
             ? "peak of a statistics_resource_adaptor over the bottom resource (bytes as requested)"
             : "pool_size() of every pool that grows through virtual memory plus what a statistics_resource_adaptor "
               "over the bottom resource counts, sampled after every event";
  }

 private:
  rmm::mr::statistics_resource_adaptor counter_;
  std::vector<rmm::mr::pool_memory_resource> mapping_pools_;
  std::atomic<std::size_t> sampled_peak_{0};
};

/// The layers that are pools mapping device memory themselves.
std::vector<rmm::mr::pool_memory_resource> pools_growing_through_virtual_memory(
  std::vector<rmm::mr::any_device_resource> const& layers)
{
  std::vector<rmm::mr::pool_memory_resource> pools;
  for (auto const& layer : layers) {
    auto const* pool = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(layer);
    if (pool != nullptr && pool->grows_contiguously()) { pools.push_back(*pool); }
  }
  return pools;
}

/// The driver's own high-water mark of a cuda_async pool.
class async_pool_gauge final : public reserved_gauge {
 public:
  explicit async_pool_gauge(rmm::mr::cuda_async_memory_resource async) : async_{std::move(async)} {}

  [[nodiscard]] std::size_t peak_bytes() const override
  {
    std::uint64_t high{};
    RMM_CUDA_TRY(cudaMemPoolGetAttribute(async_.pool_handle(), cudaMemPoolAttrReservedMemHigh, &high));
    return static_cast<std::size_t>(high);
  }
  [[nodiscard]] std::size_t current_bytes() const override
  {
    std::uint64_t now{};
    RMM_CUDA_TRY(cudaMemPoolGetAttribute(async_.pool_handle(), cudaMemPoolAttrReservedMemCurrent, &now));
    return static_cast<std::size_t>(now);
  }
  [[nodiscard]] std::string method() const override { return "cudaMemPoolAttrReservedMemHigh of its pool"; }

 private:
  rmm::mr::cuda_async_memory_resource async_;
};

/// The simulated device's own count.
class simulated_gauge final : public reserved_gauge {
 public:
  explicit simulated_gauge(simulated_device_resource device) : device_{std::move(device)} {}

  [[nodiscard]] std::size_t peak_bytes() const override { return device_.peak_used_bytes(); }
  [[nodiscard]] std::size_t current_bytes() const override { return device_.used_bytes(); }
  [[nodiscard]] std::string method() const override { return "the simulated device's peak (bytes as requested)"; }

 private:
  simulated_device_resource device_;
};

/// build_layers_over with the simulated device as the device: sizes are checked against its
/// capacity and percentages refer to it, not to the real device whose streams the replay uses.
std::vector<rmm::mr::any_device_resource> build_over_simulated_device(rmm::config::stack_description const& stack,
                                                                      rmm::cuda_device_id device,
                                                                      simulated_device_resource const& simulated)
{
  rmm::cuda_set_device_raii const current{device};
  rmm::config::build_context context{.device      = device,
                                     .free_bytes  = simulated.capacity(),
                                     .total_bytes = simulated.capacity(),
                                     .bottom_type = stack.layers.back().type()};
  rmm::config::check_against_device(stack, context);
  context.bottom_type = {};                                    // what the layers allocate from is not cuda itself
  std::vector<rmm::mr::any_device_resource> built{simulated};  // bottom first while building
  for (auto layer = std::next(stack.layers.rbegin()); layer != stack.layers.rend(); ++layer) {
    built.push_back(layer->schema->build(*layer, context, built.back()));
  }
  return {built.rbegin(), built.rend()};
}

}  // namespace

void check_stack_name(std::string const& name, stack_settings const& settings)
{
  (void)parse_stack_name(name, settings);
}

resource_stack build_stack(std::string const& name, stack_settings const& settings)
{
  auto const types = parse_stack_name(name, settings);
  auto const stack =
    rmm::config::load_string(stack_toml(types, settings), "--resource " + name, rmm::config::environment{});
  auto const device  = rmm::get_current_cuda_device();
  auto const& bottom = types.back();
  std::unique_ptr<reserved_gauge> gauge;
  std::vector<rmm::mr::any_device_resource> layers;
  if (settings.simulated_device_size) {
    simulated_device_resource simulated{*settings.simulated_device_size};
    gauge  = std::make_unique<simulated_gauge>(simulated);
    layers = build_over_simulated_device(stack, device, simulated);
  } else if (bottom == "cuda_async") {
    layers = rmm::config::build_layers(stack, device);
    gauge  = std::make_unique<async_pool_gauge>(
      *rmm::mr::detail::resource_cast<rmm::mr::cuda_async_memory_resource>(layers.back()));
  } else {
    // What reaches the bottom is counted by an adaptor standing in for it; the pools that map
    // device memory themselves (told to in stack_toml, as over cuda itself) add theirs.
    auto const alone = rmm::config::load_string(fmt::format("[[resource]]\ntype = \"{}\"\n", bottom),
                                                "--resource " + name, rmm::config::environment{});
    rmm::mr::statistics_resource_adaptor counter{rmm::config::build(alone, device)};
    layers = rmm::config::build_layers_over(stack, device, counter);
    gauge  = std::make_unique<held_bytes_gauge>(counter, pools_growing_through_virtual_memory(layers));
  }
  return resource_stack{name, describe(types, settings), std::move(gauge), layers.front()};
}

std::vector<std::string> default_stack_names(bool simulated_device)
{
  if (simulated_device) { return {"pool", "arena", "binning", "cuda"}; }
  return {"pool", "arena", "binning", "cuda_async", "cuda"};
}

std::string known_stack_names()
{
  std::string text =
    "known resources (the types of the configuration; a stack is written top first, joined by '+', and the "
    "bottom defaults to cuda):\n";
  for (auto const& schema : rmm::config::layer_schemas()) {
    if (replayable(schema)) { text += fmt::format("  {:<20}{}\n", schema.type, schema.summary); }
  }
  text += "  binning alone is binning+pool; pools start empty (--pool-initial-size)\n";
  text += "  e.g. binning+arena, pool+managed, pool+cuda_async, statistics+pool";
  return text;
}

}  // namespace rmm::replay
