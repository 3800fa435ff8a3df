// SPDX-License-Identifier: Apache-2.0
#pragma once

// Whether the process has begun to exit, for destructors that would otherwise call CUDA when the
// driver may already be unloading.

namespace rmm {

/**
 * @brief Whether `exit()` has begun (main returned, or exit was called).
 *
 * A resource's destructor that runs during exit (one held in a static, or in a table that is
 * destroyed at exit) may find the CUDA primary context already gone: such a destructor should
 * leave its memory to the operating system when this returns true. rmm's own per-device table is
 * never destroyed, so its resources are dropped at exit without a CUDA call. The marker is armed
 * at the first use of the per-device table (or of this function); exit handlers registered before
 * that run before the marker is set. One atomic load, no CUDA call.
 *
 * @return true once exit has begun
 */
[[nodiscard]] bool process_is_exiting() noexcept;

}  // namespace rmm
