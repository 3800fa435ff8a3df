// SPDX-License-Identifier: Apache-2.0
#pragma once

// Faults while paused. A kernel that touches paused memory reaches addresses that stay reserved but
// have nothing mapped; the GPU stops it and the CUDA context keeps the error for good
// (CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"), which tells the program
// nothing of the pause. While the process is paused, a thread asks each paused device's context
// every 100 ms whether it has faulted; the first fault is said on stderr at once, kept for the
// report, and given as the reason a resume cannot succeed.

#include <string>
#include <vector>

namespace rmm::shim {

/// Starts watching these devices' contexts (after a pause).
void watch_for_faults(std::vector<int> devices) noexcept;

/// Stops watching (before a resume); a check under way may still finish.
void stop_watching_for_faults() noexcept;

/// Asks these devices' contexts now. Why a resume cannot succeed when one has faulted (which is
/// then recorded and said, as by the watch), else empty.
[[nodiscard]] std::string faulted_while_paused(std::vector<int> const& devices);

}  // namespace rmm::shim
