// SPDX-License-Identifier: Apache-2.0
#include <rmm/config/build.hpp>
#include <rmm/config/load.hpp>
#include <rmm/config/schema.hpp>

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>

#include "layer_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

namespace rmm::config {

build_context device_context(cuda_device_id device)
{
  cuda_set_device_raii const current{device};
  auto const [free, total] = available_device_memory();
  return build_context{.device = device, .free_bytes = free, .total_bytes = total};
}

namespace {

/// A percentage is checked against the key's minimum only once the device's free memory is
/// known: 1% of a nearly full device can round down to 0 bytes.
void check_resolved_percentages(layer_description const& layer, build_context const& context)
{
  for (std::size_t i = 0; i < layer.parameters.size(); ++i) {
    auto const& key   = layer.schema->keys[i];
    auto const& param = layer.parameters[i];
    auto const* size  = std::get_if<size_spec>(&param.value);
    if (key.kind != value_kind::size_or_percent || size == nullptr || !size->is_percent) { continue; }
    auto const minimum = static_cast<std::uint64_t>(std::max<std::int64_t>(key.minimum, 1));
    if (resolve_size(*size, context.free_bytes) < minimum) {
      detail::fail_at(param, detail::describe_size_setting(param, context),
                      fmt::format("a percentage of free memory that comes to at least {} B", minimum));
    }
  }
}

}  // namespace

void check_against_device(stack_description const& stack, build_context const& context)
{
  for (auto const& layer : stack.layers) {
    check_resolved_percentages(layer, context);
    if (layer.schema->check_on_device != nullptr) { layer.schema->check_on_device(layer, context); }
  }
}

namespace {

std::vector<rmm::mr::any_device_resource> build_stack(stack_description const& stack,
                                                      cuda_device_id device,
                                                      std::optional<rmm::mr::any_device_resource> bottom)
{
  // The loaders never return an empty stack (a file without layers runs the built-in one), but a
  // description made in code can be.
  RMM_EXPECTS(!stack.layers.empty(), "rmm::config: the stack to build has no layers; add at least its bottom resource");
  cuda_set_device_raii const current{device};
  // One measurement before anything is allocated: every percentage in the stack refers to it.
  auto context        = device_context(device);
  context.bottom_type = stack.layers.back().type();
  check_against_device(stack, context);

  std::vector<rmm::mr::any_device_resource> built;  // bottom first while building
  built.reserve(stack.layers.size());
  auto layer = stack.layers.rbegin();
  if (bottom) {
    built.push_back(std::move(*bottom));
    context.bottom_type = {};  // what the layers allocate from is not cuda itself
    ++layer;
  }
  for (; layer != stack.layers.rend(); ++layer) {
    std::optional<rmm::mr::any_device_resource> upstream;
    if (!built.empty()) { upstream = built.back(); }
    built.push_back(layer->schema->build(*layer, context, std::move(upstream)));
  }
  return std::vector<rmm::mr::any_device_resource>(built.rbegin(), built.rend());
}

}  // namespace

std::vector<rmm::mr::any_device_resource> build_layers(stack_description const& stack, cuda_device_id device)
{
  return build_stack(stack, device, std::nullopt);
}

std::vector<rmm::mr::any_device_resource> build_layers_over(stack_description const& stack,
                                                            cuda_device_id device,
                                                            rmm::mr::any_device_resource bottom)
{
  return build_stack(stack, device, std::move(bottom));
}

rmm::mr::any_device_resource build(stack_description const& stack, cuda_device_id device)
{
  return build_layers(stack, device).front();
}

rmm::mr::any_device_resource build_from_file(std::filesystem::path const& path,
                                             cuda_device_id device,
                                             environment const& env)
{
  return build(load_file(path, env), device);
}

rmm::mr::any_device_resource build_from_string(std::string_view toml, cuda_device_id device, environment const& env)
{
  return build(load_string(toml, "<string>", env), device);
}

rmm::mr::any_device_resource build_from_environment(cuda_device_id device, environment const& env)
{
  return build(load_from_environment(env), device);
}

}  // namespace rmm::config
