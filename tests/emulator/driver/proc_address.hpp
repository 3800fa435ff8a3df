// SPDX-License-Identifier: Apache-2.0
// cuGetProcAddress: the driver's table of entry points by base name, version and stream flavour.
#pragma once

#include "common.hpp"

namespace rmm_emu {

// The real contract: the newest variant introduced at or before `cuda_version`; with
// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the _ptsz/_ptds variant where one exists.
CUresult get_proc_address(char const* symbol,
                          void** pfn,
                          int cuda_version,
                          cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status);

}  // namespace rmm_emu
