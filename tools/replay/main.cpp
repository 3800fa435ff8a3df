// SPDX-License-Identifier: Apache-2.0
// rmm-replay: replays allocation logs through memory resources and reports what each one needed.
// See docs/replay.md.

#include "command_line.hpp"
#include "replay_plan.hpp"
#include "report.hpp"
#include "resource_stack.hpp"
#include "threaded_replay.hpp"
#include "timeline.hpp"

#include <allocation_log.hpp>

#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace rmm::replay;

constexpr int exit_replay_failed = 1;
constexpr int exit_bad_input     = synopsis.exit_status;  // a malformed log is bad input, as a wrong command line

std::string describe_device(stack_settings const& settings)
{
  int device{};
  RMM_CUDA_TRY(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  RMM_CUDA_TRY(cudaGetDeviceProperties(&properties, device));
  std::size_t free_bytes{};
  std::size_t total_bytes{};
  RMM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  auto const real = fmt::format("{} (device {}, {})", properties.name, device, rmm::format_bytes(total_bytes));
  if (!settings.simulated_device_size) { return real; }
  return fmt::format("a simulated device of {}; streams on {}", rmm::format_bytes(*settings.simulated_device_size),
                     real);
}

replay_row replay_one(replay_plan const& plan,
                      std::string const& resource,
                      stack_settings const& settings,
                      timeline* picture)
{
  replay_row row{};
  row.log             = plan.log_name;
  row.resource        = resource;
  row.events          = plan.steps.size();
  row.threads         = plan.thread_steps.size();
  row.streams         = plan.logged_streams.size();
  row.peak_live_bytes = plan.facts.peak_live_bytes;
  row.logged_failures = plan.facts.logged_failures;
  row.left_live       = plan.facts.left_live;
  try {
    auto stack      = build_stack(resource, settings);
    row.description = stack.description;
    auto& gauge     = *stack.gauge;
    if (picture != nullptr) { picture->begin(resource); }
    row.measurement = replay_threaded(plan, stack.top, [&gauge, picture](std::size_t step) {
      gauge.sample();
      if (picture != nullptr) { picture->record(step, gauge.current_bytes()); }
    });
    if (!row.measurement.failure) { row.peak_reserved_bytes = gauge.peak_bytes(); }
  } catch (std::exception const& e) {
    row.setup_error = e.what();
  }
  return row;
}

/// A file named on the command line that cannot be opened for writing (`error`, errno's value,
/// says why): a command-line mistake, said before anything is replayed.
int cannot_write(std::string_view option, std::string const& path, int error)
{
  auto const reason = error != 0 ? std::strerror(error) : "it cannot be opened";
  return rmm::tools::report_command_line_error(
    synopsis, fmt::format("{} {}: cannot write there: {}; name a file in a folder that exists and can be written",
                          option, path, reason));
}

/// Every log read and checked before anything is replayed: a malformed one stops the run
/// (nothing when it did, having said why).
std::optional<std::vector<replay_plan>> read_plans(command_line const& options)
{
  std::vector<replay_plan> plans;
  try {
    auto const cut_off = options.complete_rows ? rmm::trace::cut_off_row::drop : rmm::trace::cut_off_row::refuse;
    for (auto const& log : options.logs) {
      auto contents = rmm::trace::read_log(log, cut_off);
      if (contents.dropped_line != 0) {
        fmt::print(stderr,
                   "rmm-replay: {}:{}: the log was cut off in this row; replaying the {} complete rows before it\n",
                   log, contents.dropped_line, contents.events.size());
      }
      plans.push_back(make_replay_plan(contents.events, log));
    }
  } catch (rmm::trace::parse_error const& e) {
    fmt::print(stderr, "rmm-replay: malformed log: {}\nNothing was replayed. Fix or regenerate the log.\n", e.what());
    return std::nullopt;
  }
  return plans;
}

/// Replays each log through each resource; says on stderr which could not be set up or failed.
std::vector<replay_row> replay_all(command_line const& options,
                                   std::vector<replay_plan> const& plans,
                                   timeline* picture)
{
  auto const& settings = options.settings;
  auto const resources =
    options.resources.empty() ? default_stack_names(settings.simulated_device_size.has_value()) : options.resources;
  std::vector<replay_row> rows;
  for (auto const& plan : plans) {
    for (auto const& resource : resources) {
      auto& row = rows.emplace_back(replay_one(plan, resource, settings, picture));
      if (row.setup_error) {
        fmt::print(stderr, "rmm-replay: {}: could not replay through '{}': {}\n", plan.log_name, resource,
                   *row.setup_error);
      } else if (auto const& failure = row.measurement.failure) {
        fmt::print(stderr, "rmm-replay: {}:{}: replay through '{}' ({}) failed: {}\n", plan.log_name, failure->line,
                   resource, row.description, failure->message);
      }
    }
  }
  return rows;
}

int run(command_line const& options)
{
  auto const plans = read_plans(options);
  if (!plans) { return exit_bad_input; }

  // The output files are opened before anything is replayed: a path that cannot be written stops
  // the run at once.
  std::FILE* json_file      = nullptr;
  bool const json_to_stdout = options.json_path == "-";
  if (options.json_path && !json_to_stdout) {
    json_file = std::fopen(options.json_path->c_str(), "w");
    if (json_file == nullptr) { return cannot_write("--json", *options.json_path, errno); }
  }
  std::ofstream timeline_file;
  std::optional<timeline> picture;
  if (options.timeline_path) {
    errno = 0;
    timeline_file.open(*options.timeline_path, std::ios::trunc);
    if (!timeline_file) { return cannot_write("--timeline", *options.timeline_path, errno); }
    picture.emplace(plans->front());
  }

  run_context context{describe_device(options.settings), options.settings.simulated_device_size};
  auto const rows       = replay_all(options, *plans, picture ? &*picture : nullptr);
  bool const any_failed = std::ranges::any_of(rows, [](replay_row const& row) { return row.failed(); });

  if (picture) {
    timeline_file << picture->svg();
    timeline_file.close();
    if (!timeline_file) {
      fmt::print(stderr, "rmm-replay: writing the timeline '{}' failed\n", *options.timeline_path);
      return exit_replay_failed;
    }
  }

  auto const table = format_table(context, rows);
  std::fputs(table.c_str(), json_to_stdout ? stderr : stdout);
  if (options.json_path) {
    auto const json = format_json(context, rows);
    std::fputs(json.c_str(), json_to_stdout ? stdout : json_file);
    if (json_file != nullptr && std::fclose(json_file) != 0) {
      fmt::print(stderr, "rmm-replay: writing the JSON file '{}' failed\n", *options.json_path);
      return exit_replay_failed;
    }
  }
  return any_failed ? exit_replay_failed : 0;
}

}  // namespace

int main(int argc, char** argv)
{
  command_line options;
  try {
    options = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
  } catch (usage_error const& e) {
    return rmm::tools::report_command_line_error(synopsis, e.what());
  }
  if (options.help) {
    fmt::print("{}", usage_text());
    return 0;
  }
  try {
    return run(options);
  } catch (std::exception const& e) {
    fmt::print(stderr, "rmm-replay: {}\n", e.what());
    return exit_replay_failed;
  }
}
