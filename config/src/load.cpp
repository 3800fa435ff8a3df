// SPDX-License-Identifier: Apache-2.0
#include <rmm/config/load.hpp>
#include <rmm/config/schema.hpp>

#include "toml_reader.hpp"
#include "values.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <fstream>
#include <sstream>

namespace rmm::config {

namespace {

stack_description finish(stack_description stack, environment const& env)
{
  apply_environment_overrides(stack, env);
  detail::finish_and_validate(stack);
  return stack;
}

/// The built-in stack's layers, every value a default. A pool over cuda: the pool grows by mapping
/// memory at the end of one reserved address range (CUDA virtual memory), so a small start costs
/// no fragmentation later, and a process that uses little device memory holds little. See
/// docs/configuration.md, "The built-in stack".
std::vector<layer_description> built_in_layers()
{
  std::vector<layer_description> layers;
  layers.push_back(detail::empty_layer(*find_layer_schema("pool"), value_origin::built_in, {}));
  layers.push_back(detail::empty_layer(*find_layer_schema("cuda"), value_origin::built_in, {}));
  return layers;
}

}  // namespace

std::string_view default_stack_toml() noexcept
{
  // Kept in step with load_default() by a test.
  return R"(# rmm's built-in stack: a pool over cudaMalloc that starts small and grows on demand.
[[resource]]
type = "pool"
initial_size = "32MiB"

[[resource]]
type = "cuda"
)";
}

stack_description load_default(environment const& env)
{
  stack_description stack;
  stack.shim   = detail::empty_shim_settings();
  stack.layers = built_in_layers();
  return finish(std::move(stack), env);
}

stack_description load_string(std::string_view toml, std::string_view source_name, environment const& env)
{
  auto stack = detail::read_toml(toml, std::string{source_name});
  if (stack.layers.empty()) {
    // A file that only sets [shim] keys runs the built-in stack; --check shows it as such.
    stack.layers = built_in_layers();
  }
  return finish(std::move(stack), env);
}

stack_description load_file(std::filesystem::path const& path, environment const& env)
{
  // std::ifstream opens a directory and reads nothing from it, which would pass for an empty file.
  std::error_code error;
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error)) {
    throw config_error{source_location{.file = path.string(), .line = 0, .column = 0, .variable = {}},
                       "a directory or special file", "the path of a readable TOML configuration file"};
  }
  std::ifstream file{path, std::ios::binary};
  if (!file) {
    auto const reason = std::strerror(errno);
    throw config_error{source_location{.file = path.string(), .line = 0, .column = 0, .variable = {}},
                       std::string{"no readable file ("} + reason + ")",
                       "the path of a readable TOML configuration file"};
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) {
    throw config_error{source_location{.file = path.string(), .line = 0, .column = 0, .variable = {}},
                       std::string{"a read error ("} + std::strerror(errno) + ")",
                       "the path of a readable TOML configuration file"};
  }
  return load_string(text.str(), path.string(), env);
}

stack_description load_from_environment(environment const& env)
{
  auto const file = env.get(config_file_variable);
  if (!file) { return load_default(env); }
  if (file->empty()) {
    throw config_error{
      source_location{.file = {}, .line = 0, .column = 0, .variable = std::string{config_file_variable}},
      "an empty value", "the path of a TOML configuration file, or RMM_CONFIG unset"};
  }
  return load_file(*file, env);
}

}  // namespace rmm::config
