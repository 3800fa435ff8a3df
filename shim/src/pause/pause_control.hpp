// SPDX-License-Identifier: Apache-2.0
#pragma once

// Pausing and resuming the process's device memory (rmm_shim_pause, rmm-ctl PID pause): every
// stack's pool gives its device memory back and keeps each allocated byte in host memory, while
// every block keeps its address; resume maps memory there again and puts the contents back.
// process_pause.hpp keeps the state and holds the program's calls meanwhile.

#include <string>

namespace rmm::shim {

/// What a pause does with the contents of the live blocks.
enum class pause_contents {
  as_tagged,  ///< what each tag's region asked for (regions.hpp); untagged memory is kept
  keep,       ///< copied to host memory and back at the resume
  discard     ///< dropped: the resume maps fresh memory
};

/// What a control command did, for people: done (and what), or why not.
struct control_outcome {
  bool ok{false};
  std::string message;
};

/// Waits for the device work submitted so far on every device with a stack, gives every free byte
/// back, then pauses every stack, keeping or discarding the contents. When it fails, the
/// program finds its memory as it was (its free memory may have gone back to the device): the
/// checks come first, and a stack that cannot pause resumes those paused before it. Only where one
/// of those cannot be resumed does the process stay paused, as the message says.
[[nodiscard]] control_outcome pause_process(pause_contents contents);

/// Maps the memory back and restores the contents, then applies the frees made meanwhile and lets
/// the waiting allocations go on; tags paused on their own are resumed too (alone, when the process
/// is not paused). When a device cannot give the memory back, the process stays paused with the
/// contents in host memory, and a later resume can succeed.
[[nodiscard]] control_outcome resume_process();

/// Pauses the memory of one tag (regions.hpp), as pause_process does the whole process: the other
/// tags and untagged memory run on. Every served call waits while it pauses (for the device work
/// submitted so far, then for the copies); afterwards only the tag's allocations wait, for its
/// resume, and its frees are held until then.
[[nodiscard]] control_outcome pause_tag(std::string const& tag, pause_contents contents);
/// Resumes a tag paused on its own.
[[nodiscard]] control_outcome resume_tag(std::string const& tag);

/// Gives every free byte of every stack back to the devices (rmm_shim_release).
[[nodiscard]] control_outcome release_process();

/// What a release gave back.
struct released_memory {
  std::size_t device_bytes{0};  ///< every device's free memory (release_free_memory)
  std::size_t host_bytes{0};    ///< host memory the pools kept for the next pause
};
/// Gives back every device's free memory and the host memory kept for the next pause: the work of
/// release_process and rmm_shim_release.
released_memory release_all_free_memory() noexcept;

}  // namespace rmm::shim
