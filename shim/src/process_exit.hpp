// SPDX-License-Identifier: Apache-2.0
#pragma once

// Whether the process exits: from then on nothing calls CUDA for the shim's own purposes (the
// driver may be going). Set once, by the shim's exit handler.

namespace rmm::shim {

[[nodiscard]] bool exiting() noexcept;
void mark_exiting() noexcept;
/// In a forked child: the parent's exit is not the child's.
void forget_exit_in_child() noexcept;

}  // namespace rmm::shim
