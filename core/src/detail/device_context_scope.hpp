// SPDX-License-Identifier: Apache-2.0
#pragma once

// The context the library's own driver calls run in. A thread the program never bound to a device
// (a fresh std::thread has no current context until a runtime call makes one) or bound to another
// device must still create its events, query them and synchronize on the resource's device: a
// driver call without a context fails, and one in another device's context acts on that device.

#include "cuda_driver.hpp"

namespace rmm::detail {

/// Makes `device`'s primary context current for the scope unless a context of that device is
/// current already (one cuCtxGetCurrent and one cuCtxGetDevice then), and restores the previous
/// one at its end. Failures are left to the calls that need the context, which report them.
class device_context_scope {
 public:
  explicit device_context_scope(int device) noexcept
  {
    try {
      auto const& cu = cuda_driver_table();
      if (cu.cuCtxGetCurrent(&previous_) != CUDA_SUCCESS) { return; }
      CUdevice current{};
      if (previous_ != nullptr && cu.cuCtxGetDevice(&current) == CUDA_SUCCESS && current == device) { return; }
      restore_ = cu.cuCtxSetCurrent(primary_context(device)) == CUDA_SUCCESS;
    } catch (...) {  // no driver, or the device's context cannot be retained: the call will say so
    }
  }
  ~device_context_scope()
  {
    if (restore_) { (void)cuda_driver_table().cuCtxSetCurrent(previous_); }
  }
  device_context_scope(device_context_scope const&)            = delete;
  device_context_scope& operator=(device_context_scope const&) = delete;

 private:
  CUcontext previous_{};
  bool restore_{false};
};

}  // namespace rmm::detail
