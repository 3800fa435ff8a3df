// SPDX-License-Identifier: Apache-2.0
#pragma once

// The shim's driver-level wrappers, declared from entry_points.def (defined in driver_hooks.cpp,
// submission_hooks.cpp and physical_hooks.cpp). Each has exactly the ABI of the driver function it
// stands for and only forwards to the dispatcher.

#include <cuda.h>

#include <cstddef>

#include "driver/real_driver.hpp"

#include <type_traits>

// Exported under the driver's own names (so programs linking libcuda reach them), and handed out
// by the dlsym and cuGetProcAddress wrappers. Each is declared with the type of the real function
// it stands for (cudaTypedefs.h's PFN_...), so a definition of another ABI does not compile. The
// legacy ABIs, whose names cuda.h maps to their successors by macro (cuGetProcAddress to
// cuGetProcAddress_v2, ...), are declared under names of their own and exported under the driver's.
extern "C" {
#define RMM_SHIM_HOOK(wrapper, name, first_version, end_version, flavour, real, type, need) \
  std::remove_pointer_t<type> wrapper;
#define RMM_SHIM_LEGACY_HOOK(wrapper, exported, name, first_version, end_version, flavour, real, type, need) \
  std::remove_pointer_t<type> wrapper __asm__(#exported);
#define RMM_SHIM_SUBMISSION(wrapper, name, first_version, end_version, flavour, real, type) \
  std::remove_pointer_t<type> wrapper;
#define RMM_SHIM_LEGACY_SUBMISSION(wrapper, exported, name, first_version, end_version, flavour, real, type) \
  std::remove_pointer_t<type> wrapper __asm__(#exported);
#include "driver/entry_points.def"
}
