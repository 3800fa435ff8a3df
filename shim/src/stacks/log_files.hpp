// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where the shim's event log goes. Every device of the process whose log name expands to the same
// file shares one writer for it, and no process writes into a file another process of the program
// wrote: the owner holds an advisory lock (flock) on it for its whole life, so a forked child, or a
// worker started next to its siblings, finds the name taken and writes NAME.<pid> instead; and a
// process that finds the file unlocked but written since the program started (by a process that
// already ended) leaves it alone too. "Since the program started" is the time the first process
// under the shim was loaded, which its descendants inherit (RMM_SHIM_RUN_START).

#include <string>

namespace rmm::shim {

struct opened_log {
  int fd;            ///< open for writing, truncated, locked when it is the configured name
  std::string path;  ///< the file it is
};

/// Marks when the program started, unless a process above this one did: call it at load, before
/// the program starts threads.
void note_run_start() noexcept;

/// Opens the log file `name` (its pattern already expanded) for this process: the name itself
/// when no other process holds it (truncated then), else `name.<pid>`, which is said on stderr.
/// Throws rmm::logic_error naming the file and the reason when neither can be opened.
[[nodiscard]] opened_log open_event_log(std::string const& name);

}  // namespace rmm::shim
