// SPDX-License-Identifier: Apache-2.0
#pragma once

// The marker behind rmm::process_is_exiting(): an exit handler that sets it, registered once.

namespace rmm::detail {

/// Registers the exit handler that marks the process as exiting, once per process. Handlers run
/// in the reverse order of their registration, so the later this is armed the earlier it runs:
/// it is armed when the per-device table is first used, after the CUDA runtime has registered
/// its own handler.
void arm_exit_marker() noexcept;

}  // namespace rmm::detail
