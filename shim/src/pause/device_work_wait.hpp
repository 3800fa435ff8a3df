// SPDX-License-Identifier: Apache-2.0
#pragma once

// Waiting for the work queued on devices, on a thread of its own, so that the one who waits can
// give up. A pause must see that work done before memory goes, but cuCtxSynchronize cannot be
// interrupted, and a stream held by a host function, an event never recorded or a kernel that
// does not end never finishes. When the caller gives up, the waiting thread is left to end on its
// own once the work does.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace rmm::shim {

enum class device_wait_end {
  done,       ///< every device's work submitted before the call has finished
  failed,     ///< a device's context failed (`error` says how)
  timed_out,  ///< the deadline came first
  cancelled,  ///< `cancelled` turned true first
};

struct device_wait_result {
  device_wait_end end{device_wait_end::done};
  std::string error;
};

/// Waits for the work queued so far on each of `devices` (their primary contexts) until
/// `deadline`, or until `cancelled` turns true (asked every few milliseconds).
[[nodiscard]] device_wait_result wait_for_device_work(std::vector<int> const& devices,
                                                      std::chrono::steady_clock::time_point deadline,
                                                      std::function<bool()> const& cancelled);

}  // namespace rmm::shim
