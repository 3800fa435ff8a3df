// SPDX-License-Identifier: Apache-2.0
#pragma once

// How rmm-run, rmm-ctl and rmm-replay tell a mistake on their command line, in one form: the tool's name,
// what was wrong and what to do instead, then the short usage and where the rest is.
//
//   rmm-run: unknown option '--chek' (did you mean --check?)
//   usage: rmm-run [OPTIONS] -- PROGRAM [ARGS...]   (rmm-run --help lists the options)
//
// and the tool's exit status for a wrong command line (64 for rmm-run, whose 2 means an invalid
// configuration, and for rmm-ctl, whose 1 means the process could not do it; 2 for rmm-replay, as
// for a malformed log).

#include <cstdio>
#include <string>
#include <string_view>

namespace rmm::tools {

/// A tool's name, its usage in one line, and its exit status for a command line it cannot act on.
struct command_synopsis {
  std::string_view program;  ///< "rmm-run"
  std::string_view usage;    ///< "[OPTIONS] -- PROGRAM [ARGS...]"
  int exit_status;           ///< what main returns after the message
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

/// Writes command_line_error_text to stderr; returns the tool's exit status, for main to return.
inline int report_command_line_error(command_synopsis const& tool, std::string_view message)
{
  std::fputs(command_line_error_text(tool, message).c_str(), stderr);
  return tool.exit_status;
}

}  // namespace rmm::tools
