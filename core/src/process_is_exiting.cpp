// SPDX-License-Identifier: Apache-2.0
#include "detail/exit_marker.hpp"

#include <rmm/process_is_exiting.hpp>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace rmm {

namespace {

std::atomic<bool> exit_began{false};

}  // namespace

void detail::arm_exit_marker() noexcept
{
  static std::once_flag once;
  try {
    std::call_once(once, [] { (void)std::atexit([] { exit_began.store(true, std::memory_order_release); }); });
  } catch (...) {  // std::call_once failed (std::system_error): the marker stays unarmed
  }
}

bool process_is_exiting() noexcept
{
  detail::arm_exit_marker();
  return exit_began.load(std::memory_order_acquire);
}

}  // namespace rmm
