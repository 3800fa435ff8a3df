// SPDX-License-Identifier: Apache-2.0
// Shared by every translation unit of the emulated runtime (libcudart.so.13).
//
// The runtime keeps no memory or stream state: every call goes to the driver through entry points
// obtained from cuGetProcAddress, the way NVIDIA's libcudart does. Its own state is the per-thread
// current device and last error, the driver table, and the "unloading" flag set at exit.
#pragma once

// See driver/common.hpp: declares every _ptsz/_ptds variant under its real name, so the compiler
// checks our definitions against NVIDIA's prototypes. It does not change which names we export.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#define RMM_RT_EXPORT extern "C" __attribute__((visibility("default")))

namespace rmm_emu::rt {

// An entry point in its legacy-stream and per-thread-stream flavours (resolver flags 0 and
// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), each bound to its own driver function.
template <class F>
struct Flavours {
  F legacy     = nullptr;
  F per_thread = nullptr;
  F operator()(bool pt) const { return pt ? per_thread : legacy; }
};

// The driver entry points the runtime uses, with the ABI version it asks for.
struct Driver {
  PFN_cuGetProcAddress_v12000 getProcAddress;
  PFN_cuInit_v2000 init;
  PFN_cuDriverGetVersion_v2020 driverGetVersion;
  PFN_cuDeviceGet_v2000 deviceGet;
  PFN_cuDeviceGetCount_v2000 deviceGetCount;
  PFN_cuDeviceGetName_v2000 deviceGetName;
  PFN_cuDeviceTotalMem_v3020 deviceTotalMem;
  PFN_cuDeviceGetAttribute_v2000 deviceGetAttribute;
  PFN_cuDeviceGetUuid_v11040 deviceGetUuid;
  PFN_cuDeviceGetDefaultMemPool_v11020 deviceGetDefaultMemPool;
  PFN_cuDeviceSetMemPool_v11020 deviceSetMemPool;
  PFN_cuDeviceGetMemPool_v11020 deviceGetMemPool;
  PFN_cuMemGetDefaultMemPool_v13000 memGetDefaultMemPool;
  PFN_cuMemGetMemPool_v13000 memGetMemPool;
  PFN_cuDevicePrimaryCtxRetain_v7000 primaryCtxRetain;
  PFN_cuDevicePrimaryCtxRelease_v11000 primaryCtxRelease;
  PFN_cuDevicePrimaryCtxSetFlags_v11000 primaryCtxSetFlags;
  PFN_cuDevicePrimaryCtxGetState_v7000 primaryCtxGetState;
  PFN_cuDevicePrimaryCtxReset_v11000 primaryCtxReset;
  PFN_cuCtxSetCurrent_v4000 ctxSetCurrent;
  PFN_cuCtxGetCurrent_v4000 ctxGetCurrent;
  PFN_cuCtxGetDevice_v2000 ctxGetDevice;
  PFN_cuCtxSynchronize_v2000 ctxSynchronize;
  PFN_cuCtxGetStreamPriorityRange_v5050 ctxGetStreamPriorityRange;
  PFN_cuDeviceCanAccessPeer_v4000 deviceCanAccessPeer;
  PFN_cuCtxEnablePeerAccess_v4000 ctxEnablePeerAccess;
  PFN_cuCtxDisablePeerAccess_v4000 ctxDisablePeerAccess;
  PFN_cuMemGetInfo_v3020 memGetInfo;
  PFN_cuMemAllocManaged_v6000 memAllocManaged;
  PFN_cuMemAlloc_v3020 memAlloc;
  PFN_cuMemFree_v3020 memFree;
  PFN_cuMemGetAddressRange_v3020 memGetAddressRange;
  PFN_cuMemFreeHost_v2000 memFreeHost;
  PFN_cuMemHostAlloc_v2020 memHostAlloc;
  PFN_cuMemHostGetDevicePointer_v3020 memHostGetDevicePointer;
  PFN_cuMemHostGetFlags_v2030 memHostGetFlags;
  PFN_cuPointerGetAttribute_v4000 pointerGetAttribute;
  PFN_cuPointerGetAttributes_v7000 pointerGetAttributes;
  Flavours<PFN_cuMemAllocAsync_v11020> memAllocAsync;
  Flavours<PFN_cuMemAllocFromPoolAsync_v11020> memAllocFromPoolAsync;
  Flavours<PFN_cuMemFreeAsync_v11020> memFreeAsync;
  PFN_cuMemPoolTrimTo_v11020 memPoolTrimTo;
  PFN_cuMemPoolSetAttribute_v11020 memPoolSetAttribute;
  PFN_cuMemPoolGetAttribute_v11020 memPoolGetAttribute;
  PFN_cuMemPoolSetAccess_v11020 memPoolSetAccess;
  PFN_cuMemPoolGetAccess_v11020 memPoolGetAccess;
  PFN_cuMemPoolCreate_v11020 memPoolCreate;
  PFN_cuMemPoolDestroy_v11020 memPoolDestroy;
  PFN_cuMemPoolExportToShareableHandle_v11020 memPoolExportToShareableHandle;
  Flavours<PFN_cuMemcpy_v4000> memcpy;
  Flavours<PFN_cuMemcpyAsync_v4000> memcpyAsync;
  Flavours<PFN_cuMemcpyPeer_v4000> memcpyPeer;
  Flavours<PFN_cuMemcpyPeerAsync_v4000> memcpyPeerAsync;
  Flavours<PFN_cuMemcpyHtoD_v3020> memcpyHtoD;
  Flavours<PFN_cuMemcpyHtoDAsync_v3020> memcpyHtoDAsync;
  Flavours<PFN_cuMemcpyDtoH_v3020> memcpyDtoH;
  Flavours<PFN_cuMemcpyDtoHAsync_v3020> memcpyDtoHAsync;
  Flavours<PFN_cuMemcpyDtoD_v3020> memcpyDtoD;
  Flavours<PFN_cuMemcpyDtoDAsync_v3020> memcpyDtoDAsync;
  Flavours<PFN_cuMemsetD8_v3020> memsetD8;
  Flavours<PFN_cuMemsetD8Async_v3020> memsetD8Async;
  Flavours<PFN_cuLaunchHostFunc_v10000> launchHostFunc;
  PFN_cuEventCreate_v2000 eventCreate;
  Flavours<PFN_cuEventRecord_v2000> eventRecord;
  Flavours<PFN_cuEventRecordWithFlags_v11010> eventRecordWithFlags;
  PFN_cuEventQuery_v2000 eventQuery;
  PFN_cuEventSynchronize_v2000 eventSynchronize;
  PFN_cuEventDestroy_v4000 eventDestroy;
  PFN_cuEventElapsedTime_v12080 eventElapsedTime;
  PFN_cuStreamCreate_v2000 streamCreate;
  PFN_cuStreamCreateWithPriority_v5050 streamCreateWithPriority;
  Flavours<PFN_cuStreamGetPriority_v5050> streamGetPriority;
  Flavours<PFN_cuStreamGetFlags_v5050> streamGetFlags;
  Flavours<PFN_cuStreamGetDevice_v12080> streamGetDevice;
  Flavours<PFN_cuStreamGetId_v12000> streamGetId;
  PFN_cuStreamDestroy_v4000 streamDestroy;
  Flavours<PFN_cuStreamWaitEvent_v3020> streamWaitEvent;
  Flavours<PFN_cuStreamAddCallback_v5000> streamAddCallback;
  Flavours<PFN_cuStreamSynchronize_v2000> streamSynchronize;
  Flavours<PFN_cuStreamQuery_v2000> streamQuery;
  Flavours<PFN_cuStreamBeginCapture_v10010> streamBeginCapture;
  Flavours<PFN_cuStreamEndCapture_v10000> streamEndCapture;
  Flavours<PFN_cuStreamIsCapturing_v10000> streamIsCapturing;
  Flavours<PFN_cuStreamGetCaptureInfo_v12030> streamGetCaptureInfo;
  PFN_cuThreadExchangeStreamCaptureMode_v10010 threadExchangeStreamCaptureMode;
  PFN_cuMemAdvise_v12020 memAdvise;
  PFN_cuMemRangeGetAttribute_v8000 memRangeGetAttribute;
  Flavours<PFN_cuMemPrefetchAsync_v12020> memPrefetchAsync;
  PFN_cuTexObjectCreate_v5000 texObjectCreate;
  PFN_cuTexObjectDestroy_v5000 texObjectDestroy;
  PFN_cuGetErrorString_v6000 getErrorString;
  PFN_cuGetErrorName_v6000 getErrorName;
};

// The driver table; valid once enter() succeeded.
Driver const& driver();

// True once the runtime's exit handler ran: every call then returns cudaErrorCudartUnloading.
bool unloading();

// dlopen + entry-point lookup only (cudaDriverGetVersion needs no cuInit). Sticky result.
cudaError_t load_driver();

// First thing of every entry point: refuses after exit, initialises lazily (dlopen, resolve,
// cuInit, atexit), and with `context` makes the calling thread's device current in the driver.
cudaError_t enter(bool context);

// Records a failure as the calling thread's last error (cudaErrorNotReady is not an error).
cudaError_t record(cudaError_t e);
cudaError_t to_runtime(CUresult r);
inline cudaError_t result(CUresult r) { return record(to_runtime(r)); }

// The calling thread's current device (cudaSetDevice / the current driver context / 0).
cudaError_t current_device(int& device);
// Makes `device` the calling thread's current device: retains its primary context, binds it.
cudaError_t activate_device(int device);
// cudaDeviceReset dropped the device's primary context: retain it again on next use.
void forget_device(int device);

// Prints "rmm CUDA emulator: <what>" to stderr once per distinct `what`.
void note_once(char const* what);

}  // namespace rmm_emu::rt

#define RMM_RT_ENTER()                                                                 \
  do {                                                                                 \
    if (auto const e_ = ::rmm_emu::rt::enter(false); e_ != cudaSuccess) { return e_; } \
  } while (false)
#define RMM_RT_ENTER_CONTEXT()                                                        \
  do {                                                                                \
    if (auto const e_ = ::rmm_emu::rt::enter(true); e_ != cudaSuccess) { return e_; } \
  } while (false)
