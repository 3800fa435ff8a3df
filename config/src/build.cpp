#include <rmm/config/build.hpp>
#include <rmm/config/load.hpp>
#include <rmm/config/schema.hpp>

#include <rmm/cuda_device.hpp>

namespace rmm::config {

build_context device_context(cuda_device_id device)
{
  cuda_set_device_raii const current{device};
  auto const [free, total] = available_device_memory();
  return build_context{.device = device, .free_bytes = free, .total_bytes = total};
}

void check_against_device(stack_description const& stack, build_context const& context)
{
  for (auto const& layer : stack.layers) {
    if (layer.schema->check_on_device != nullptr) { layer.schema->check_on_device(layer, context); }
  }
}

std::vector<rmm::mr::any_device_resource> build_layers(stack_description const& stack, cuda_device_id device)
{
  cuda_set_device_raii const current{device};
  // One measurement before anything is allocated: every percentage in the stack refers to it.
  auto const context = device_context(device);
  check_against_device(stack, context);

  std::vector<rmm::mr::any_device_resource> built;  // bottom first while building
  built.reserve(stack.layers.size());
  for (auto layer = stack.layers.rbegin(); layer != stack.layers.rend(); ++layer) {
    std::optional<rmm::mr::any_device_resource> upstream;
    if (!built.empty()) { upstream = built.back(); }
    built.push_back(layer->schema->build(*layer, context, std::move(upstream)));
  }
  return std::vector<rmm::mr::any_device_resource>(built.rbegin(), built.rend());
}

rmm::mr::any_device_resource build(stack_description const& stack, cuda_device_id device)
{
  return build_layers(stack, device).front();
}

rmm::mr::any_device_resource build_from_file(std::filesystem::path const& path, cuda_device_id device, environment const& env)
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
