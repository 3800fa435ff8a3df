// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <rmm/config/schema.hpp>

#include <array>
#include <charconv>
#include <string_view>

namespace rmm::tools {

char const* usage_text() noexcept
{
  return R"(usage: rmm-run [--config FILE] [--pool-size SIZE] [--log FILE] [--report [FILE]] [--verbose]
               -- PROGRAM [ARGS...]
       rmm-run --check [--config FILE] [--pool-size SIZE] [--device N] [--build]
       rmm-run --print-default

Runs PROGRAM with the preload shim (librmm_shim.so): its device allocations go through the
configured resource stack. The configuration is validated first; a bad one never reaches the
program. LD_PRELOAD keeps what it held, after the shim (a sanitizer's runtime stays first).

  --config FILE    the TOML file to use; without it RMM_CONFIG names the file, and without
                   that the built-in stack is used. RMM_<TYPE>_<KEY> variables override values.
  --pool-size SIZE the pool's initial size ("8GiB", "50%", bytes): RMM_POOL_INITIAL_SIZE (also
                   with --check)
  --log FILE       log every allocation and free to FILE (CSV; %p process id, %d device)
  --report [FILE]  print the shim's report to stderr when the program exits; with FILE, also
                   write it there as JSON
  --verbose        print the resolved stack at start, and how the program found each wrapper
  --check          validate the configuration and print the resolved stack: every layer top
                   first, every value with where it came from (default, file, environment)
  --device N       device whose memory resolves percentages and is checked against (default 0)
  --build          with --check: also build the stack on the device and allocate through it
  --print-default  print the built-in stack as a TOML file to start from
  --help           this text

RMM_SHIM_ENABLED=false runs PROGRAM with the shim switched off: every call passes through and no
configuration is read, so a broken one does not stop it.

exit status: with PROGRAM, PROGRAM's own (127 when it cannot be found, 126 when it cannot be run);
otherwise 0 valid, 1 valid but the device could not build it (--build), or the shim is missing or
cannot be preloaded, 2 invalid configuration, 64 wrong command line (a --log or --report file
that cannot be written included). Reference: docs/shim.md, docs/configuration.md
)";
}

namespace {

constexpr std::array<std::string_view, 10> option_names{"--check",   "--build",     "--print-default", "--help",
                                                        "--config",  "--pool-size", "--log",           "--report",
                                                        "--verbose", "--device"};

/// A mistaken argument where an option was expected: a program named before `--`, or a misspelt
/// option with its likely meaning.
usage_error not_an_option(std::string const& argument)
{
  if (!argument.starts_with("-")) {
    return usage_error{"'" + argument + "' is not an option of rmm-run: the program and its arguments go after '--' (" +
                       "rmm-run [OPTIONS] -- " + argument + " ...)"};
  }
  std::string message = "unknown option '" + argument + "'";
  if (auto const guess = rmm::config::closest_match(argument, option_names)) {
    message += " (did you mean " + std::string{*guess} + "?)";
  }
  return usage_error{std::move(message)};
}

}  // namespace

std::variant<run_options, usage_error> parse_options(std::vector<std::string> const& arguments)
{
  run_options options;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    auto const& argument = arguments[i];
    // The value of an option that takes one: the next argument, unless there is none or it is an
    // option itself (`--log -- ./prog` must not log to a file named `--`).
    std::optional<usage_error> missing;
    auto const next_value = [&](std::string const& what) -> std::optional<std::string> {
      if (i + 1 >= arguments.size()) {
        missing = usage_error{argument + " needs " + what + " after it"};
        return std::nullopt;
      }
      auto const& next = arguments[i + 1];
      if (next.empty() || next.starts_with("-")) {
        missing = usage_error{argument + " needs " + what +
                              (next.empty() ? ", not an empty argument" : ", not the option '" + next + "'")};
        return std::nullopt;
      }
      return arguments[++i];
    };
    if (argument == "--") {
      options.program.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i) + 1, arguments.end());
      if (options.program.empty()) { return usage_error{"'--' must be followed by the program to run"}; }
      break;
    }
    if (argument == "--check") {
      options.check = true;
    } else if (argument == "--build") {
      options.build = true;
    } else if (argument == "--print-default") {
      options.print_default = true;
    } else if (argument == "--help" || argument == "-h") {
      options.help = true;
    } else if (argument == "--config") {
      options.config = next_value("a file name");
    } else if (argument == "--pool-size") {
      options.pool_size = next_value("a size, like 8GiB or 50%");
    } else if (argument == "--log") {
      options.log_file = next_value("a file name");
    } else if (argument == "--report") {
      options.report = true;
      // An optional file: the next argument, unless it is an option or the `--` before the program.
      if (i + 1 < arguments.size() && !arguments[i + 1].starts_with("-")) { options.report_file = arguments[++i]; }
    } else if (argument == "--verbose") {
      options.verbose = true;
    } else if (argument == "--device") {
      auto const text = next_value("a device number (0, 1, ...)");
      if (!text) { return *missing; }
      int device{};
      auto const parsed = std::from_chars(text->data(), text->data() + text->size(), device);
      if (parsed.ec != std::errc{} || parsed.ptr != text->data() + text->size() || device < 0) {
        return usage_error{"--device needs a device number (0, 1, ...), not '" + *text + "'"};
      }
      options.device = device;
    } else {
      return not_an_option(argument);
    }
    if (missing) { return *missing; }
  }
  if (options.help) { return options; }
  if (options.build && !options.check) { return usage_error{"--build goes with --check"}; }
  if (options.check && !options.program.empty()) {
    return usage_error{"--check validates only; run the program without --check"};
  }
  bool const shim_options = options.log_file || options.report || options.verbose;
  if (shim_options && options.program.empty()) {
    return usage_error{"--log, --report and --verbose go with a program: -- PROGRAM [ARGS...]"};
  }
  if (!options.check && !options.print_default && options.program.empty()) {
    return usage_error{"nothing to do: give --check, --print-default, or -- PROGRAM"};
  }
  return options;
}

}  // namespace rmm::tools
