// SPDX-License-Identifier: Apache-2.0
// The pre-CUDA-3.2 entry points with 32-bit device pointers and sizes. Real libcuda still exports
// them (a raw dlsym("cuMemAlloc") finds this ABI, not cuMemAlloc_v2); here they exist so that
// lookups resolve as on real CUDA, and refuse to work: no emulated address fits in 32 bits.
#include "common.hpp"
#include "state.hpp"

namespace {
CUresult legacy_abi()
{
  RMM_EMU_REQUIRE_INIT();
  return CUDA_ERROR_NOT_SUPPORTED;
}
}  // namespace

RMM_EMU_EXPORT CUresult cuDeviceTotalMem(unsigned int*, CUdevice) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemGetInfo(unsigned int*, unsigned int*) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemAlloc(CUdeviceptr_v1*, unsigned int) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemFree(CUdeviceptr_v1) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemAllocHost(void**, unsigned int) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemGetAddressRange(CUdeviceptr_v1*, unsigned int*, CUdeviceptr_v1) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemHostGetDevicePointer(CUdeviceptr_v1*, void*, unsigned int) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr_v1, void const*, unsigned int) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemcpyDtoH(void*, CUdeviceptr_v1, unsigned int) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemcpyDtoD(CUdeviceptr_v1, CUdeviceptr_v1, unsigned int) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1, void const*, unsigned int, CUstream) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemcpyDtoHAsync(void*, CUdeviceptr_v1, unsigned int, CUstream) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1, CUdeviceptr_v1, unsigned int, CUstream)
{
  return legacy_abi();
}
RMM_EMU_EXPORT CUresult cuMemsetD8(CUdeviceptr_v1, unsigned char, unsigned int) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemsetD16(CUdeviceptr_v1, unsigned short, unsigned int) { return legacy_abi(); }
RMM_EMU_EXPORT CUresult cuMemsetD32(CUdeviceptr_v1, unsigned int, unsigned int) { return legacy_abi(); }
