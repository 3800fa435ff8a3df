// SPDX-License-Identifier: Apache-2.0
#pragma once

// rmm-replay's command line.

#include "resource_stack.hpp"

#include <command_line_error.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rmm::replay {

/// Bad usage: the message says what was wrong; main prints it with the synopsis and exits 2
/// (rmm::tools::report_command_line_error).
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct command_line {
  std::vector<std::string> logs;
  std::vector<std::string> resources;  ///< empty: the defaults
  stack_settings settings;
  std::optional<std::string> json_path;      ///< "-" for stdout
  std::optional<std::string> timeline_path;  ///< an SVG picture of the replay (one log only)
  bool complete_rows{false};                 ///< replay a log cut off in its last row up to that row
  bool help{false};
};

/// What follows every command-line mistake; --help prints the rest.
inline constexpr rmm::tools::command_synopsis synopsis{"rmm-replay", "[OPTIONS] LOG...", 2};

/// Parses argv (without validating resource names against a device). Throws usage_error.
[[nodiscard]] command_line parse_command_line(std::vector<std::string> const& arguments);

[[nodiscard]] std::string usage_text();

}  // namespace rmm::replay
