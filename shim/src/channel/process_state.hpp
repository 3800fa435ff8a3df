// SPDX-License-Identifier: Apache-2.0
#pragma once

// Whether another process runs, read from /proc/PID/stat: shared by the shim (an IPC importer
// watched without a pidfd) and rmm-ctl (a socket whose process is gone).

#include <sys/types.h>

namespace rmm::shim {

struct process_state {
  bool running{false};                ///< it exists and is no zombie (one that exited and waits for its parent)
  unsigned long long start_ticks{0};  ///< when it started (field 22): tells it from a later process of its id
};

/// The state of process `pid`; not running when it has no entry in /proc.
[[nodiscard]] process_state state_of_process(pid_t pid) noexcept;

}  // namespace rmm::shim
