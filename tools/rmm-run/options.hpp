// SPDX-License-Identifier: Apache-2.0
#pragma once

// Command line of rmm-run: options first, then optionally `--` and a program with its arguments.

#include <command_line_error.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace rmm::tools {

struct run_options {
  bool check{false};                       ///< --check: validate and print the stack, run nothing
  bool build{false};                       ///< --build: with --check, also build the stack on the device
  bool print_default{false};               ///< --print-default: the built-in stack as TOML
  bool help{false};                        ///< --help
  std::optional<std::string> config;       ///< --config FILE (else RMM_CONFIG, else the built-in stack)
  std::optional<int> device;               ///< --device N (default 0)
  std::optional<std::string> pool_size;    ///< --pool-size SIZE: the pool's initial size
  std::optional<std::string> log_file;     ///< --log FILE: log every allocation (CSV)
  bool report{false};                      ///< --report [FILE]: the report at exit
  std::optional<std::string> report_file;  ///< ... as JSON to FILE
  bool verbose{false};                     ///< --verbose: the stack and the hooks at start
  std::vector<std::string> program;        ///< after `--`: the program and its arguments
};

struct usage_error {
  std::string message;
};

/// What follows every command-line mistake (command_line_error.hpp); --help prints the rest.
inline constexpr command_synopsis synopsis{"rmm-run", "[OPTIONS] -- PROGRAM [ARGS...]", 64};

[[nodiscard]] std::variant<run_options, usage_error> parse_options(std::vector<std::string> const& arguments);

[[nodiscard]] char const* usage_text() noexcept;

}  // namespace rmm::tools
