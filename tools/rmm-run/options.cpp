// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <rmm/config/schema.hpp>

#include <algorithm>
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

/// What an option takes after it.
enum class takes { nothing, value, optional_file };

/// One option: its name, what it takes (and how to say it in a message), and what it sets.
struct option_row {
  std::string_view name;
  takes argument;
  std::string_view value_is;  ///< "a file name": for the message when the value is missing
  std::optional<usage_error> (*apply)(run_options& options, std::string const& value);
};

using result = std::optional<usage_error>;

std::optional<usage_error> parse_device(run_options& options, std::string const& text)
{
  int device{};
  auto const parsed = std::from_chars(text.data(), text.data() + text.size(), device);
  if (parsed.ec != std::errc{} || parsed.ptr != text.data() + text.size() || device < 0) {
    return usage_error{"--device needs a device number (0, 1, ...), not '" + text + "'"};
  }
  options.device = device;
  return std::nullopt;
}

// Every option of rmm-run, one line each (usage_text() explains them).
constexpr std::array<option_row, 11> option_table{{
  {"--check",
   takes::nothing,
   {},
   [](run_options& o, std::string const&) -> result {
     o.check = true;
     return {};
   }},
  {"--build",
   takes::nothing,
   {},
   [](run_options& o, std::string const&) -> result {
     o.build = true;
     return {};
   }},
  {"--print-default",
   takes::nothing,
   {},
   [](run_options& o, std::string const&) -> result {
     o.print_default = true;
     return {};
   }},
  {"--help",
   takes::nothing,
   {},
   [](run_options& o, std::string const&) -> result {
     o.help = true;
     return {};
   }},
  {"-h",
   takes::nothing,
   {},
   [](run_options& o, std::string const&) -> result {
     o.help = true;
     return {};
   }},
  {"--config", takes::value, "a file name",
   [](run_options& o, std::string const& v) -> result {
     o.config = v;
     return {};
   }},
  {"--pool-size", takes::value, "a size, like 8GiB or 50%",
   [](run_options& o, std::string const& v) -> result {
     o.pool_size = v;
     return {};
   }},
  {"--log", takes::value, "a file name",
   [](run_options& o, std::string const& v) -> result {
     o.log_file = v;
     return {};
   }},
  {"--report",
   takes::optional_file,
   {},
   [](run_options& o, std::string const& v) -> result {
     o.report = true;
     if (!v.empty()) { o.report_file = v; }
     return {};
   }},
  {"--verbose",
   takes::nothing,
   {},
   [](run_options& o, std::string const&) -> result {
     o.verbose = true;
     return {};
   }},
  {"--device", takes::value, "a device number (0, 1, ...)", parse_device},
}};

/// A mistaken argument where an option was expected: a program named before `--`, or a misspelt
/// option with its likely meaning.
usage_error not_an_option(std::string const& argument)
{
  if (!argument.starts_with("-")) {
    return usage_error{"'" + argument + "' is not an option of rmm-run: the program and its arguments go after '--' (" +
                       "rmm-run [OPTIONS] -- " + argument + " ...)"};
  }
  std::array<std::string_view, option_table.size()> names{};
  for (std::size_t n = 0; n < option_table.size(); ++n) { names[n] = option_table[n].name; }
  std::string message = "unknown option '" + argument + "'";
  if (auto const guess = rmm::config::closest_match(argument, names)) {
    message += " (did you mean " + std::string{*guess} + "?)";
  }
  return usage_error{std::move(message)};
}

/// The value of `row`, taken from the argument after position `i` (which moves past it): a value
/// must be there and be no option itself (`--log -- ./prog` must not log to a file named `--`);
/// an optional file is taken only when the next argument is no option.
std::variant<std::string, usage_error> value_of(option_row const& row,
                                                std::vector<std::string> const& arguments,
                                                std::size_t& i)
{
  bool const there = i + 1 < arguments.size();
  if (row.argument == takes::nothing) { return std::string{}; }
  if (row.argument == takes::optional_file) {
    return there && !arguments[i + 1].starts_with("-") ? arguments[++i] : std::string{};
  }
  std::string const what{row.value_is};
  if (!there) { return usage_error{std::string{row.name} + " needs " + what + " after it"}; }
  auto const& next = arguments[i + 1];
  if (next.empty() || next.starts_with("-")) {
    return usage_error{std::string{row.name} + " needs " + what +
                       (next.empty() ? ", not an empty argument" : ", not the option '" + next + "'")};
  }
  return arguments[++i];
}

/// The options that do not go together, or nothing to do.
std::optional<usage_error> inconsistent(run_options const& options)
{
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
  return std::nullopt;
}

}  // namespace

std::variant<run_options, usage_error> parse_options(std::vector<std::string> const& arguments)
{
  run_options options;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    auto const& argument = arguments[i];
    if (argument == "--") {
      options.program.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i) + 1, arguments.end());
      if (options.program.empty()) { return usage_error{"'--' must be followed by the program to run"}; }
      break;
    }
    auto const row =
      std::find_if(option_table.begin(), option_table.end(), [&](option_row const& r) { return r.name == argument; });
    if (row == option_table.end()) { return not_an_option(argument); }
    auto value = value_of(*row, arguments, i);
    if (auto const* error = std::get_if<usage_error>(&value)) { return *error; }
    if (auto error = row->apply(options, std::get<std::string>(value))) { return *error; }
  }
  if (options.help) { return options; }
  if (auto error = inconsistent(options)) { return *error; }
  return options;
}

}  // namespace rmm::tools
