// SPDX-License-Identifier: Apache-2.0
// rmm-run: runs a program under the preload shim with a configuration, or validates a
// configuration (--check).

#include "options.hpp"
#include "preload_check.hpp"

#include <rmm/aligned.hpp>
#include <rmm/config/config.hpp>
#include <rmm/config/environment.hpp>
#include <rmm/config/file_name_pattern.hpp>
#include <rmm/config/shim_settings.hpp>
#include <rmm/environment_variables.hpp>
#include <rmm/error.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace {

// Exit statuses (documented in docs/configuration.md). A wrong command line is synopsis.exit_status
// (64, sysexits' EX_USAGE): scripts tell it from an invalid configuration.
constexpr int exit_valid          = 0;
constexpr int exit_build_failed   = 1;
constexpr int exit_invalid_config = 2;
constexpr int exit_cannot_run     = 126;
constexpr int exit_not_found      = 127;

/// RMM_SHIM_ENABLED=false: the shim passes every call through and reads no configuration, so
/// rmm-run reads none either. A broken file must not block the way to run the program without it.
/// The shim's own test, through the one boolean reader.
bool shim_switched_off() { return rmm::config::shim_switched_off(); }

/// Why the shim will not be able to write `pattern` (its %p and %d expanded for this process and
/// device 0): a missing or unwritable folder, a folder in the file's place. nullopt when it can.
std::optional<std::string> unwritable(std::string const& pattern)
{
  namespace fs        = std::filesystem;
  fs::path const path = rmm::config::expand_file_name_pattern(pattern, static_cast<long>(::getpid()), 0);
  auto const folder   = path.has_parent_path() ? path.parent_path() : fs::path{"."};
  std::error_code error;
  if (fs::is_directory(path, error)) { return std::string{std::strerror(EISDIR)}; }
  if (!fs::is_directory(folder, error)) {
    return std::string{std::strerror(ENOENT)} + " (no folder " + folder.string() + ")";
  }
  if (::access(folder.c_str(), W_OK) != 0) { return std::string{std::strerror(errno)} + " (" + folder.string() + ")"; }
  if (fs::exists(path, error) && ::access(path.c_str(), W_OK) != 0) { return std::string{std::strerror(errno)}; }
  return std::nullopt;
}

/// The variable --pool-size stands for.
std::string pool_size_variable() { return rmm::config::override_variable("pool", "initial_size"); }

/// The environment variables the options stand for.
std::map<std::string, std::string> option_variables(rmm::tools::run_options const& options)
{
  using rmm::config::override_variable;
  std::map<std::string, std::string> variables;
  if (options.config) {
    variables[std::string{rmm::name_of(rmm::env_var::config)}] = std::filesystem::absolute(*options.config).string();
  }
  if (options.pool_size) { variables[pool_size_variable()] = *options.pool_size; }
  if (options.log_file) {
    variables[override_variable("shim", "log_file")] = std::filesystem::absolute(*options.log_file).string();
  }
  if (options.report) { variables[override_variable("shim", "stats_at_exit")] = "true"; }
  if (options.report_file) {
    variables[override_variable("shim", "report_file")] = std::filesystem::absolute(*options.report_file).string();
  }
  if (options.verbose) { variables[override_variable("shim", "verbose")] = "true"; }
  return variables;
}

rmm::config::environment environment_for(rmm::tools::run_options const& options)
{
  auto env = rmm::config::environment::from_process();
  for (auto const& [name, value] : option_variables(options)) { env.set(name, value); }
  return env;
}

rmm::config::stack_description load(rmm::config::environment const& env)
{
  return rmm::config::load_from_environment(env);  // RMM_CONFIG is set from --config
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
    auto resource                     = rmm::config::build(stack, device);
    constexpr std::size_t probe_bytes = std::size_t{1} << 20;
    void* pointer                     = resource.allocate_sync(probe_bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    resource.deallocate_sync(pointer, probe_bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
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
  auto const env    = environment_for(options);
  auto const stack  = load(env);
  auto const device = rmm::cuda_device_id{options.device.value_or(0)};
  auto const memory = device_memory(device);
  if (memory) { rmm::config::check_against_device(stack, *memory); }
  std::printf("configuration valid\n%s", rmm::config::describe(stack, memory).c_str());
  if (options.build) { return build_on_device(stack, device); }
  return exit_valid;
}

/// librmm_shim.so next to this rmm-run: `lib/` beside `bin/` when installed, `shim/` in a build tree.
std::optional<std::filesystem::path> find_shim()
{
  std::error_code error;
  auto const self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) { return std::nullopt; }
  auto const here = self.parent_path();
  for (auto const& candidate : {here / ".." / "lib" / "librmm_shim.so", here / ".." / "lib64" / "librmm_shim.so",
                                here / ".." / "shim" / "librmm_shim.so"}) {
    if (std::filesystem::exists(candidate, error)) { return std::filesystem::canonical(candidate, error); }
  }
  return std::nullopt;
}

/// LD_PRELOAD for the program: the shim in front of what it held, except a sanitizer's runtime
/// (libasan, libtsan, ...), which must stay first: it initializes before anything it intercepts.
std::string preload_with_shim(std::string const& shim, std::string const& existing)
{
  std::string sanitizers;
  std::string others;
  std::size_t start = 0;
  while (start <= existing.size()) {
    auto end = existing.find_first_of(": ", start);
    if (end == std::string::npos) { end = existing.size(); }
    auto const entry = existing.substr(start, end - start);
    if (!entry.empty()) {
      auto const name    = std::filesystem::path{entry}.filename().string();
      bool const runtime = name.starts_with("libasan.") || name.starts_with("libtsan.") ||
                           name.starts_with("libubsan.") || name.starts_with("liblsan.") ||
                           name.starts_with("libhwasan.");
      auto& list = runtime ? sanitizers : others;
      list += (list.empty() ? "" : ":") + entry;
    }
    start = end + 1;
  }
  std::string preload = sanitizers.empty() ? shim : sanitizers + ":" + shim;
  return others.empty() ? preload : preload + ":" + others;
}

/// Replaces this process by the program, with the shim preloaded and the options' variables set.
int launch(rmm::tools::run_options const& options)
{
  auto const shim = find_shim();
  if (!shim) {
    std::fprintf(stderr, "rmm-run: cannot find librmm_shim.so in ../lib or ../shim next to rmm-run; reinstall rmm\n");
    return exit_build_failed;
  }
  char const* existing = std::getenv("LD_PRELOAD");
  auto const preload   = preload_with_shim(shim->string(), existing != nullptr ? existing : "");
  if (auto const problem = rmm::tools::shim_load_problem(preload)) {
    std::fprintf(stderr, "rmm-run: %s cannot be preloaded, so the program would run without it: %s\n", shim->c_str(),
                 problem->c_str());
    return exit_build_failed;
  }
  if (rmm::tools::is_statically_linked(options.program.front())) {
    std::fprintf(stderr,
                 "rmm-run: warning: %s is statically linked: the dynamic loader never runs for it, so the shim "
                 "cannot serve its allocations (only the dynamically linked programs it starts are served)\n",
                 options.program.front().c_str());
  }
  for (auto const& [name, value] : option_variables(options)) { ::setenv(name.c_str(), value.c_str(), 1); }
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
  std::vector<char*> argv;
  for (auto const& argument : options.program) { argv.push_back(const_cast<char*>(argument.c_str())); }
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(argv[0], argv.data());
  // Only reached when the program could not be started.
  auto const reason = errno;
  std::fprintf(stderr, "rmm-run: cannot run %s: %s\n", argv[0], std::strerror(reason));
  return reason == ENOENT ? exit_not_found : exit_cannot_run;
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc == 2 && std::strcmp(argv[1], rmm::tools::shim_probe_argument) == 0) {
    return rmm::tools::answer_shim_probe();
  }
  std::vector<std::string> const arguments(argv + 1, argv + argc);
  auto parsed = rmm::tools::parse_options(arguments);
  if (auto const* error = std::get_if<rmm::tools::usage_error>(&parsed)) {
    return rmm::tools::report_command_line_error(rmm::tools::synopsis, error->message);
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
  // Files the program's shim writes at its end: a path it cannot write is said now, not after a
  // long run.
  for (auto const& [option, file] :
       {std::pair{"--log", options.log_file}, std::pair{"--report", options.report_file}}) {
    if (!file) { continue; }
    if (auto const why = unwritable(*file)) {
      return rmm::tools::report_command_line_error(rmm::tools::synopsis,
                                                   std::string{option} + " " + *file + ": cannot write there: " + *why +
                                                     "; name a file in a folder that exists and can be written");
    }
  }
  try {
    if (options.check) { return check(options); }
    // Validate first, so a bad configuration never reaches the program.
    if (!shim_switched_off()) { (void)load(environment_for(options)); }
    return launch(options);
  } catch (rmm::config::config_error const& e) {
    if (options.pool_size && e.location().variable == pool_size_variable()) {
      return rmm::tools::report_command_line_error(rmm::tools::synopsis,
                                                   "--pool-size: found " + e.found() + ", expected " + e.expected());
    }
    std::fprintf(stderr, "rmm-run: %s\n", e.what());
    return exit_invalid_config;
  } catch (std::exception const& e) {  // e.g. a CUDA error while reading the device's properties
    std::fprintf(stderr, "rmm-run: %s\n", e.what());
    return exit_build_failed;
  }
}
