// SPDX-License-Identifier: Apache-2.0
// Entry points: initialisation, version, error strings, cuGetProcAddress.
#include "common.hpp"
#include "errors.hpp"
#include "proc_address.hpp"
#include "state.hpp"

RMM_EMU_EXPORT CUresult cuInit(unsigned int flags)
{
  if (flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  return rmm_emu::initialize();
}

// Works before cuInit, as on real CUDA (the runtime asks before initialising).
RMM_EMU_EXPORT CUresult cuDriverGetVersion(int* version)
{
  if (version == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  *version = rmm_emu::kDriverVersion;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuGetErrorName(CUresult error, char const** str)
{
  if (str == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  *str = rmm_emu::error_name(error);
  return *str != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

RMM_EMU_EXPORT CUresult cuGetErrorString(CUresult error, char const** str)
{
  if (str == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  *str = rmm_emu::error_string(error);
  return *str != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

RMM_EMU_EXPORT CUresult cuGetProcAddress_v2(char const* symbol,
                                            void** pfn,
                                            int cudaVersion,
                                            cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* symbolStatus)
{
  return rmm_emu::get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);
}

// The CUDA 11.3 signature, without the status out-parameter.
RMM_EMU_EXPORT CUresult cuGetProcAddress(char const* symbol, void** pfn, int cudaVersion, cuuint64_t flags)
{
  return rmm_emu::get_proc_address(symbol, pfn, cudaVersion, flags, nullptr);
}
