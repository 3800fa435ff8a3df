// SPDX-License-Identifier: Apache-2.0
#include "process_exit.hpp"

#include <atomic>

namespace rmm::shim {

namespace {
std::atomic<bool> exit_begun{false};
}  // namespace

bool exiting() noexcept { return exit_begun.load(std::memory_order_relaxed); }

void mark_exiting() noexcept { exit_begun.store(true, std::memory_order_relaxed); }

void forget_exit_in_child() noexcept { exit_begun.store(false, std::memory_order_relaxed); }

}  // namespace rmm::shim
