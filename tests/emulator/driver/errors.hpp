// SPDX-License-Identifier: Apache-2.0
// Names and descriptions of the CUresult codes, for cuGetErrorName / cuGetErrorString.
#pragma once

#include "common.hpp"

namespace rmm_emu {

// nullptr when the code is not a CUresult this driver knows.
char const* error_name(CUresult code);
char const* error_string(CUresult code);

}  // namespace rmm_emu
