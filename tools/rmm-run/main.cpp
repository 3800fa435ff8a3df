// rmm-run: validates a configuration (--check) and, once the preload shim exists, runs programs
// under it with that configuration.

#include "options.hpp"

#include <rmm/config/config.hpp>
#include <rmm/error.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

// Exit statuses (documented in docs/configuration.md).
constexpr int exit_valid          = 0;
constexpr int exit_build_failed   = 1;
constexpr int exit_invalid_config = 2;
constexpr int exit_usage          = 64;

rmm::config::stack_description load(rmm::tools::run_options const& options, rmm::config::environment const& env)
{
  if (options.config) { return rmm::config::load_file(*options.config, env); }
  return rmm::config::load_from_environment(env);
}

/// Free and total memory of the device, or nullopt (with a note) when there is no usable device:
/// a file can be checked on a machine without a GPU, only percentages stay unresolved.
std::optional<rmm::config::build_context> device_memory(rmm::cuda_device_id device)
{
  try {
    if (device.value() >= rmm::get_num_cuda_devices()) {
      std::fprintf(stderr, "rmm-run: note: no device %d; percentages are not resolved\n", device.value());
      return std::nullopt;
    }
    return rmm::config::device_context(device);
  } catch (rmm::cuda_error const& e) {
    std::fprintf(stderr, "rmm-run: note: no usable CUDA device (%s); percentages are not resolved\n", e.what());
    return std::nullopt;
  }
}

/// Builds the stack and allocates and frees 1 MiB through it.
int build_on_device(rmm::config::stack_description const& stack, rmm::cuda_device_id device)
{
  try {
    // The guard first: the stack is destroyed with its device current, as it was built.
    rmm::cuda_set_device_raii const current{device};
    auto resource = rmm::config::build(stack, device);
    constexpr std::size_t probe_bytes = std::size_t{1} << 20;
    void* pointer                     = resource.allocate_sync(probe_bytes);
    resource.deallocate_sync(pointer, probe_bytes);
    std::printf("built on device %d; allocated and freed 1 MiB through it\n", device.value());
    return exit_valid;
  } catch (rmm::config::config_error const&) {
    throw;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "rmm-run: the configuration is valid, but building it on device %d failed: %s\n",
                 device.value(), e.what());
    return exit_build_failed;
  }
}

int check(rmm::tools::run_options const& options)
{
  auto const env    = rmm::config::environment::from_process();
  auto const stack  = load(options, env);
  auto const device = rmm::cuda_device_id{options.device.value_or(0)};
  auto const memory = device_memory(device);
  if (memory) { rmm::config::check_against_device(stack, *memory); }
  std::printf("configuration valid\n%s", rmm::config::describe(stack, memory).c_str());
  if (options.build) { return build_on_device(stack, device); }
  return exit_valid;
}

}  // namespace

int main(int argc, char** argv)
{
  std::vector<std::string> const arguments(argv + 1, argv + argc);
  auto parsed = rmm::tools::parse_options(arguments);
  if (auto const* error = std::get_if<rmm::tools::usage_error>(&parsed)) {
    std::fprintf(stderr, "rmm-run: %s\n%s", error->message.c_str(), rmm::tools::usage_text());
    return exit_usage;
  }
  auto const& options = std::get<rmm::tools::run_options>(parsed);
  if (options.help) {
    std::printf("%s", rmm::tools::usage_text());
    return exit_valid;
  }
  if (options.print_default) {
    std::printf("%s", std::string{rmm::config::default_stack_toml()}.c_str());
    return exit_valid;
  }
  try {
    if (options.check) { return check(options); }
    // Launching: validate first, so a bad configuration never reaches the program.
    (void)load(options, rmm::config::environment::from_process());
    std::fprintf(stderr,
                 "rmm-run: the configuration is valid, but running programs needs the preload shim, which is "
                 "not built yet; use --check\n");
    return exit_usage;
  } catch (rmm::config::config_error const& e) {
    std::fprintf(stderr, "rmm-run: %s\n", e.what());
    return exit_invalid_config;
  } catch (std::exception const& e) {  // e.g. a CUDA error while reading the device's properties
    std::fprintf(stderr, "rmm-run: %s\n", e.what());
    return exit_build_failed;
  }
}
