// SPDX-License-Identifier: Apache-2.0
#pragma once

// Devices and their primary contexts, as the shim sees them through the real driver. The stacks
// live in each device's primary context (where the CUDA runtime and every framework allocate);
// memory of another context is the program's own business and passes through.

#include <cuda.h>

#include <optional>

namespace rmm::shim {

/// The current context's device when the current context is that device's primary context;
/// nullopt when no context is current or it is another one.
[[nodiscard]] std::optional<int> current_primary_device() noexcept;

/// Makes `device`'s primary context current for its lifetime when it is not already, then
/// restores the previous one.
class scoped_device_context {
 public:
  explicit scoped_device_context(int device) noexcept;
  ~scoped_device_context();
  scoped_device_context(scoped_device_context const&)            = delete;
  scoped_device_context& operator=(scoped_device_context const&) = delete;

 private:
  CUcontext previous_{};
  bool switched_{false};
};

}  // namespace rmm::shim
