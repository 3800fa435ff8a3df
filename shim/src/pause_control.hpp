// SPDX-License-Identifier: Apache-2.0
#pragma once

// Pausing and resuming the process's device memory (rmm_shim_pause, rmm-ctl PID pause): every
// stack's pool gives its device memory back and keeps each allocated byte in host memory, while
// every block keeps its address; resume maps memory there again and puts the contents back.
// process_pause.hpp keeps the state and holds the program's calls meanwhile.

#include <string>

namespace rmm::shim {

/// What a control command did, for people: done (and what), or why not.
struct control_outcome {
  bool ok{false};
  std::string message;
};

/// Waits for the device work submitted so far, gives every free byte back, then pauses every
/// stack; with `discard`, the contents are not kept. Nothing changes when it fails: every check
/// comes first, and a stack that cannot pause resumes those paused before it.
[[nodiscard]] control_outcome pause_process(bool discard);

/// Maps the memory back and restores the contents, then applies the frees made meanwhile and lets
/// the waiting allocations go on. When a device cannot give the memory back, the process stays
/// paused with the contents in host memory, and a later resume can succeed.
[[nodiscard]] control_outcome resume_process();

/// Gives every free byte of every stack back to the devices (rmm_shim_release).
[[nodiscard]] control_outcome release_process();

}  // namespace rmm::shim
