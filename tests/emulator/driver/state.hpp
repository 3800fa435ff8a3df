// SPDX-License-Identifier: Apache-2.0
// Process-wide driver state: initialisation and the device table.
#pragma once

#include "common.hpp"

namespace rmm_emu {

class Device;

// cuInit's body: reads the environment and builds the devices, once. A forked child of an
// initialised process gets CUDA_ERROR_NOT_INITIALIZED, as on real CUDA.
CUresult initialize();

// True once cuInit succeeded (and this is not a forked child).
bool ready();

int device_count();
Device* device(int ordinal);  // nullptr for an ordinal out of range

}  // namespace rmm_emu

// First statement of every entry point that needs cuInit.
#define RMM_EMU_REQUIRE_INIT()                                      \
  do {                                                              \
    if (!::rmm_emu::ready()) { return CUDA_ERROR_NOT_INITIALIZED; } \
  } while (false)
