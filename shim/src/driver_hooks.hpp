#pragma once

// The shim's driver-level wrappers. Each has exactly the ABI of the driver function it stands for,
// checked by the compiler against cuda.h's prototype (or, for the legacy ABIs below,
// cudaTypedefs.h's), and only forwards to the dispatcher.

#include <cuda.h>

#include <cstddef>

// Exported under the driver's own names (so programs linking libcuda reach them), and handed out
// by the dlsym and cuGetProcAddress wrappers.
extern "C" {
CUresult cuGetProcAddress_v2(char const* symbol,
                             void** pfn,
                             int version,
                             cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status);
CUresult cuMemAlloc_v2(CUdeviceptr* dptr, std::size_t bytes);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemAllocAsync(CUdeviceptr* dptr, std::size_t bytes, CUstream stream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUstream stream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream);
CUresult cuMemAllocManaged(CUdeviceptr* dptr, std::size_t bytes, unsigned int flags);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool, CUstream stream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool, CUstream stream);
CUresult cuMemCreate(CUmemGenericAllocationHandle* handle,
                     std::size_t bytes,
                     CUmemAllocationProp const* prop,
                     unsigned long long flags);
CUresult cuMemGetInfo_v2(std::size_t* free, std::size_t* total);
CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, std::size_t* size, CUdeviceptr dptr);
CUresult cuIpcGetMemHandle(CUipcMemHandle* handle, CUdeviceptr dptr);
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* dptr, CUipcMemHandle handle, unsigned int flags);
CUresult cuIpcCloseMemHandle(CUdeviceptr dptr);
CUresult cuDeviceSetMemPool(CUdevice device, CUmemoryPool pool);
CUresult cuStreamCreate(CUstream* stream, unsigned int flags);
CUresult cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int priority);
CUresult cuStreamDestroy_v2(CUstream stream);
CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream stream, CUstreamCaptureMode mode);
CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph);
CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph);
CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr);
CUresult cuPointerGetAttributes(unsigned int count, CUpointer_attribute* attributes, void** data, CUdeviceptr ptr);
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr);
CUresult cuDevicePrimaryCtxReset_v2(CUdevice device);

// Legacy ABIs under names that cuda.h maps to their successors by macro (cuGetProcAddress to
// cuGetProcAddress_v2, ...): declared under names of their own, exported under the driver's.
CUresult legacy_cuGetProcAddress(char const* symbol,
                                 void** pfn,
                                 int version,
                                 cuuint64_t flags) __asm__("cuGetProcAddress");
CUresult legacy_cuIpcOpenMemHandle(CUdeviceptr* dptr,
                                   CUipcMemHandle handle,
                                   unsigned int flags) __asm__("cuIpcOpenMemHandle");
CUresult legacy_cuDevicePrimaryCtxReset(CUdevice device) __asm__("cuDevicePrimaryCtxReset");
}
