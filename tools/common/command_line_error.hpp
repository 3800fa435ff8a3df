#pragma once

// How rmm-run and rmm-replay tell a mistake on their command line, in one form: the tool's name,
// what was wrong and what to do instead, then the short usage and where the rest is.
//
//   rmm-run: unknown option '--chek' (did you mean --check?)
//   usage: rmm-run [OPTIONS] -- PROGRAM [ARGS...]   (rmm-run --help lists the options)
//
// and exit status 2 (exit_command_line).

#include <cstdio>
#include <string>
#include <string_view>

namespace rmm::tools {

/// The exit status of a command line the tool cannot act on, in both tools.
inline constexpr int exit_command_line = 2;

/// A tool's name and its usage in one line.
struct command_synopsis {
  std::string_view program;  ///< "rmm-run"
  std::string_view usage;    ///< "[OPTIONS] -- PROGRAM [ARGS...]"
};

/// The message in the form above, ending in a newline. `message` says what was wrong and, where
/// the usage does not make it plain, what to do; it may span lines.
[[nodiscard]] inline std::string command_line_error_text(command_synopsis const& tool, std::string_view message)
{
  std::string text{tool.program};
  text.append(": ").append(message).append("\nusage: ").append(tool.program).append(" ").append(tool.usage);
  text.append("   (").append(tool.program).append(" --help lists the options)\n");
  return text;
}

/// Writes command_line_error_text to stderr; returns exit_command_line, for main to return.
inline int report_command_line_error(command_synopsis const& tool, std::string_view message)
{
  std::fputs(command_line_error_text(tool, message).c_str(), stderr);
  return exit_command_line;
}

}  // namespace rmm::tools
