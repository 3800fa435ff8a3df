// SPDX-License-Identifier: Apache-2.0
#include "proc_address.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rmm_emu {
namespace {

struct Entry {
  char const* base;
  int version;      // CUDA version that introduced this variant
  bool per_thread;  // a _ptsz / _ptds variant
  void* fn;
};

// The cast through the PFN typedef of cudaTypedefs.h makes the compiler check that `fn` really has
// the signature NVIDIA documents for (base, version): a wrong version or variant does not compile.
// Macro bodies and the table keep one entry per line.
// clang-format off
#define RMM_EMU_PROC(base, ver, fn) \
  Entry { #base, ver, false, reinterpret_cast<void*>(static_cast<PFN_##base##_v##ver>(&fn)) }
#define RMM_EMU_PROC_PT(base, ver, flavour, fn) \
  Entry { #base, ver, true, reinterpret_cast<void*>(static_cast<PFN_##base##_v##ver##_##flavour>(&fn)) }

// Every other entry point of the CUDA 13.0 driver: the static CUDA runtime (nvcc's default, and the
// one inside cuda-bindings) asks for all of them at start and takes a missing one for a driver too
// old (cudaErrorCallRequiresNewerDriver). Each answers CUDA_ERROR_NOT_SUPPORTED and says once on
// stderr that it is not emulated. The stubs take no
// parameters: the caller's arguments are ignored, which the x86-64 calling convention allows.
#define RMM_EMU_UNIMPLEMENTED(base, ver, per_thread)                                                   \
  CUresult unimplemented_##base##_##ver##_##per_thread()                                              \
  {                                                                                                    \
    static std::atomic<bool> said{false};                                                              \
    if (!said.exchange(true)) {                                                                        \
      std::fprintf(stderr, "rmm CUDA emulator: " #base " is not emulated; returning CUDA_ERROR_NOT_SUPPORTED\n"); \
    }                                                                                                  \
    return CUDA_ERROR_NOT_SUPPORTED;                                                                   \
  }
#include "unimplemented.inc"
#undef RMM_EMU_UNIMPLEMENTED

std::vector<Entry> const& entries()
{
  static auto const* table = [] {
  auto* all = new std::vector<Entry>{
    RMM_EMU_PROC(cuInit, 2000, cuInit),
    RMM_EMU_PROC(cuDriverGetVersion, 2020, cuDriverGetVersion),
    RMM_EMU_PROC(cuGetProcAddress, 11030, cuGetProcAddress),
    RMM_EMU_PROC(cuGetProcAddress, 12000, cuGetProcAddress_v2),
    RMM_EMU_PROC(cuGetErrorString, 6000, cuGetErrorString),
    RMM_EMU_PROC(cuGetErrorName, 6000, cuGetErrorName),
    // devices and contexts
    RMM_EMU_PROC(cuDeviceGet, 2000, cuDeviceGet),
    RMM_EMU_PROC(cuDeviceGetCount, 2000, cuDeviceGetCount),
    RMM_EMU_PROC(cuDeviceGetName, 2000, cuDeviceGetName),
    RMM_EMU_PROC(cuDeviceTotalMem, 2000, cuDeviceTotalMem),
    RMM_EMU_PROC(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2),
    RMM_EMU_PROC(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute),
    RMM_EMU_PROC(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer),
    RMM_EMU_PROC(cuDeviceGetUuid, 9020, cuDeviceGetUuid),
    RMM_EMU_PROC(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2),
    RMM_EMU_PROC(cuDeviceGetDefaultMemPool, 11020, cuDeviceGetDefaultMemPool),
    RMM_EMU_PROC(cuDeviceGetMemPool, 11020, cuDeviceGetMemPool),
    RMM_EMU_PROC(cuDeviceSetMemPool, 11020, cuDeviceSetMemPool),
    RMM_EMU_PROC(cuDeviceGetGraphMemAttribute, 11040, cuDeviceGetGraphMemAttribute),
    RMM_EMU_PROC(cuDeviceGraphMemTrim, 11040, cuDeviceGraphMemTrim),
    RMM_EMU_PROC(cuMemGetDefaultMemPool, 13000, cuMemGetDefaultMemPool),
    RMM_EMU_PROC(cuMemGetMemPool, 13000, cuMemGetMemPool),
    RMM_EMU_PROC(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain),
    RMM_EMU_PROC(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease),
    RMM_EMU_PROC(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2),
    RMM_EMU_PROC(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState),
    RMM_EMU_PROC(cuDevicePrimaryCtxSetFlags, 7000, cuDevicePrimaryCtxSetFlags),
    RMM_EMU_PROC(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2),
    RMM_EMU_PROC(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset),
    RMM_EMU_PROC(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2),
    RMM_EMU_PROC(cuCtxGetCurrent, 4000, cuCtxGetCurrent),
    RMM_EMU_PROC(cuCtxSetCurrent, 4000, cuCtxSetCurrent),
    RMM_EMU_PROC(cuCtxGetDevice, 2000, cuCtxGetDevice),
    RMM_EMU_PROC(cuCtxGetDevice, 13000, cuCtxGetDevice_v2),
    RMM_EMU_PROC(cuCtxSynchronize, 2000, cuCtxSynchronize),
    RMM_EMU_PROC(cuCtxSynchronize, 13000, cuCtxSynchronize_v2),
    RMM_EMU_PROC(cuCtxPushCurrent, 2000, cuCtxPushCurrent),
    RMM_EMU_PROC(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2),
    RMM_EMU_PROC(cuCtxPopCurrent, 2000, cuCtxPopCurrent),
    RMM_EMU_PROC(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2),
    RMM_EMU_PROC(cuCtxGetStreamPriorityRange, 5050, cuCtxGetStreamPriorityRange),
    RMM_EMU_PROC(cuCtxEnablePeerAccess, 4000, cuCtxEnablePeerAccess),
    RMM_EMU_PROC(cuCtxDisablePeerAccess, 4000, cuCtxDisablePeerAccess),
    // memory
    RMM_EMU_PROC(cuMemGetInfo, 2000, cuMemGetInfo),
    RMM_EMU_PROC(cuMemGetInfo, 3020, cuMemGetInfo_v2),
    RMM_EMU_PROC(cuMemAlloc, 2000, cuMemAlloc),
    RMM_EMU_PROC(cuMemAlloc, 3020, cuMemAlloc_v2),
    RMM_EMU_PROC(cuMemFree, 2000, cuMemFree),
    RMM_EMU_PROC(cuMemFree, 3020, cuMemFree_v2),
    RMM_EMU_PROC(cuMemAllocManaged, 6000, cuMemAllocManaged),
    RMM_EMU_PROC(cuMemAllocHost, 2000, cuMemAllocHost),
    RMM_EMU_PROC(cuMemAllocHost, 3020, cuMemAllocHost_v2),
    RMM_EMU_PROC(cuMemHostAlloc, 2020, cuMemHostAlloc),
    RMM_EMU_PROC(cuMemFreeHost, 2000, cuMemFreeHost),
    RMM_EMU_PROC(cuTexObjectCreate, 5000, cuTexObjectCreate),
    RMM_EMU_PROC(cuTexObjectDestroy, 5000, cuTexObjectDestroy),
    RMM_EMU_PROC(cuMemGetAddressRange, 2000, cuMemGetAddressRange),
    RMM_EMU_PROC(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2),
    RMM_EMU_PROC(cuMemHostGetDevicePointer, 2020, cuMemHostGetDevicePointer),
    RMM_EMU_PROC(cuMemHostGetDevicePointer, 3020, cuMemHostGetDevicePointer_v2),
    RMM_EMU_PROC(cuMemHostGetFlags, 2030, cuMemHostGetFlags),
    RMM_EMU_PROC(cuPointerGetAttribute, 4000, cuPointerGetAttribute),
    RMM_EMU_PROC(cuMemRangeGetAttribute, 8000, cuMemRangeGetAttribute),
    RMM_EMU_PROC(cuMemRangeGetAttributes, 8000, cuMemRangeGetAttributes),
    RMM_EMU_PROC(cuPointerGetAttributes, 7000, cuPointerGetAttributes),
    RMM_EMU_PROC(cuMemPrefetchAsync, 8000, cuMemPrefetchAsync),
    RMM_EMU_PROC_PT(cuMemPrefetchAsync, 8000, ptsz, cuMemPrefetchAsync_ptsz),
    RMM_EMU_PROC(cuMemPrefetchAsync, 12020, cuMemPrefetchAsync_v2),
    RMM_EMU_PROC_PT(cuMemPrefetchAsync, 12020, ptsz, cuMemPrefetchAsync_v2_ptsz),
    RMM_EMU_PROC(cuMemAdvise, 8000, cuMemAdvise),
    RMM_EMU_PROC(cuMemAdvise, 12020, cuMemAdvise_v2),
    // virtual memory management
    RMM_EMU_PROC(cuMemAddressReserve, 10020, cuMemAddressReserve),
    RMM_EMU_PROC(cuMemAddressFree, 10020, cuMemAddressFree),
    RMM_EMU_PROC(cuMemCreate, 10020, cuMemCreate),
    RMM_EMU_PROC(cuMemRelease, 10020, cuMemRelease),
    RMM_EMU_PROC(cuMemMap, 10020, cuMemMap),
    RMM_EMU_PROC(cuMemUnmap, 10020, cuMemUnmap),
    RMM_EMU_PROC(cuMemSetAccess, 10020, cuMemSetAccess),
    RMM_EMU_PROC(cuMemGetAccess, 10020, cuMemGetAccess),
    RMM_EMU_PROC(cuMemGetAllocationGranularity, 10020, cuMemGetAllocationGranularity),
    RMM_EMU_PROC(cuMemGetAllocationPropertiesFromHandle, 10020, cuMemGetAllocationPropertiesFromHandle),
    RMM_EMU_PROC(cuMemExportToShareableHandle, 10020, cuMemExportToShareableHandle),
    RMM_EMU_PROC(cuMemImportFromShareableHandle, 10020, cuMemImportFromShareableHandle),
    // CUDA IPC (refused: see api_vmm.cpp)
    RMM_EMU_PROC(cuIpcGetMemHandle, 4010, cuIpcGetMemHandle),
    RMM_EMU_PROC(cuIpcOpenMemHandle, 4010, cuIpcOpenMemHandle),
    RMM_EMU_PROC(cuIpcOpenMemHandle, 11000, cuIpcOpenMemHandle_v2),
    RMM_EMU_PROC(cuIpcCloseMemHandle, 4010, cuIpcCloseMemHandle),
    RMM_EMU_PROC(cuMemRetainAllocationHandle, 11000, cuMemRetainAllocationHandle),
    // stream-ordered allocation
    RMM_EMU_PROC(cuMemAllocAsync, 11020, cuMemAllocAsync),
    RMM_EMU_PROC_PT(cuMemAllocAsync, 11020, ptsz, cuMemAllocAsync_ptsz),
    RMM_EMU_PROC(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync),
    RMM_EMU_PROC_PT(cuMemAllocFromPoolAsync, 11020, ptsz, cuMemAllocFromPoolAsync_ptsz),
    RMM_EMU_PROC(cuMemFreeAsync, 11020, cuMemFreeAsync),
    RMM_EMU_PROC_PT(cuMemFreeAsync, 11020, ptsz, cuMemFreeAsync_ptsz),
    RMM_EMU_PROC(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo),
    RMM_EMU_PROC(cuMemPoolSetAttribute, 11020, cuMemPoolSetAttribute),
    RMM_EMU_PROC(cuMemPoolGetAttribute, 11020, cuMemPoolGetAttribute),
    RMM_EMU_PROC(cuMemPoolSetAccess, 11020, cuMemPoolSetAccess),
    RMM_EMU_PROC(cuMemPoolGetAccess, 11020, cuMemPoolGetAccess),
    RMM_EMU_PROC(cuMemPoolCreate, 11020, cuMemPoolCreate),
    RMM_EMU_PROC(cuMemPoolDestroy, 11020, cuMemPoolDestroy),
    RMM_EMU_PROC(cuMemPoolExportToShareableHandle, 11020, cuMemPoolExportToShareableHandle),
    RMM_EMU_PROC(cuMemPoolImportFromShareableHandle, 11020, cuMemPoolImportFromShareableHandle),
    RMM_EMU_PROC(cuMemPoolExportPointer, 11020, cuMemPoolExportPointer),
    RMM_EMU_PROC(cuMemPoolImportPointer, 11020, cuMemPoolImportPointer),
    // copies and sets
    RMM_EMU_PROC(cuMemcpy, 4000, cuMemcpy),
    RMM_EMU_PROC_PT(cuMemcpy, 7000, ptds, cuMemcpy_ptds),
    RMM_EMU_PROC(cuMemcpyAsync, 4000, cuMemcpyAsync),
    RMM_EMU_PROC_PT(cuMemcpyAsync, 7000, ptsz, cuMemcpyAsync_ptsz),
    RMM_EMU_PROC(cuMemcpyPeer, 4000, cuMemcpyPeer),
    RMM_EMU_PROC_PT(cuMemcpyPeer, 7000, ptds, cuMemcpyPeer_ptds),
    RMM_EMU_PROC(cuMemcpyPeerAsync, 4000, cuMemcpyPeerAsync),
    RMM_EMU_PROC_PT(cuMemcpyPeerAsync, 7000, ptsz, cuMemcpyPeerAsync_ptsz),
    RMM_EMU_PROC(cuMemcpyHtoD, 2000, cuMemcpyHtoD),
    RMM_EMU_PROC(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2),
    RMM_EMU_PROC_PT(cuMemcpyHtoD, 7000, ptds, cuMemcpyHtoD_v2_ptds),
    RMM_EMU_PROC(cuMemcpyDtoH, 2000, cuMemcpyDtoH),
    RMM_EMU_PROC(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2),
    RMM_EMU_PROC_PT(cuMemcpyDtoH, 7000, ptds, cuMemcpyDtoH_v2_ptds),
    RMM_EMU_PROC(cuMemcpyDtoD, 2000, cuMemcpyDtoD),
    RMM_EMU_PROC(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2),
    RMM_EMU_PROC_PT(cuMemcpyDtoD, 7000, ptds, cuMemcpyDtoD_v2_ptds),
    RMM_EMU_PROC(cuMemcpyHtoDAsync, 2000, cuMemcpyHtoDAsync),
    RMM_EMU_PROC(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2),
    RMM_EMU_PROC_PT(cuMemcpyHtoDAsync, 7000, ptsz, cuMemcpyHtoDAsync_v2_ptsz),
    RMM_EMU_PROC(cuMemcpyDtoHAsync, 2000, cuMemcpyDtoHAsync),
    RMM_EMU_PROC(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2),
    RMM_EMU_PROC_PT(cuMemcpyDtoHAsync, 7000, ptsz, cuMemcpyDtoHAsync_v2_ptsz),
    RMM_EMU_PROC(cuMemcpyDtoDAsync, 3000, cuMemcpyDtoDAsync),
    RMM_EMU_PROC(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2),
    RMM_EMU_PROC_PT(cuMemcpyDtoDAsync, 7000, ptsz, cuMemcpyDtoDAsync_v2_ptsz),
    RMM_EMU_PROC(cuMemsetD8, 2000, cuMemsetD8),
    RMM_EMU_PROC(cuMemsetD8, 3020, cuMemsetD8_v2),
    RMM_EMU_PROC_PT(cuMemsetD8, 7000, ptds, cuMemsetD8_v2_ptds),
    RMM_EMU_PROC(cuMemsetD16, 2000, cuMemsetD16),
    RMM_EMU_PROC(cuMemsetD16, 3020, cuMemsetD16_v2),
    RMM_EMU_PROC_PT(cuMemsetD16, 7000, ptds, cuMemsetD16_v2_ptds),
    RMM_EMU_PROC(cuMemsetD32, 2000, cuMemsetD32),
    RMM_EMU_PROC(cuMemsetD32, 3020, cuMemsetD32_v2),
    RMM_EMU_PROC_PT(cuMemsetD32, 7000, ptds, cuMemsetD32_v2_ptds),
    RMM_EMU_PROC(cuMemsetD8Async, 3020, cuMemsetD8Async),
    RMM_EMU_PROC_PT(cuMemsetD8Async, 7000, ptsz, cuMemsetD8Async_ptsz),
    RMM_EMU_PROC(cuMemsetD16Async, 3020, cuMemsetD16Async),
    RMM_EMU_PROC_PT(cuMemsetD16Async, 7000, ptsz, cuMemsetD16Async_ptsz),
    RMM_EMU_PROC(cuMemsetD32Async, 3020, cuMemsetD32Async),
    RMM_EMU_PROC_PT(cuMemsetD32Async, 7000, ptsz, cuMemsetD32Async_ptsz),
    // streams
    RMM_EMU_PROC(cuStreamCreate, 2000, cuStreamCreate),
    RMM_EMU_PROC(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority),
    RMM_EMU_PROC(cuStreamGetPriority, 5050, cuStreamGetPriority),
    RMM_EMU_PROC_PT(cuStreamGetPriority, 7000, ptsz, cuStreamGetPriority_ptsz),
    RMM_EMU_PROC(cuStreamGetFlags, 5050, cuStreamGetFlags),
    RMM_EMU_PROC_PT(cuStreamGetFlags, 7000, ptsz, cuStreamGetFlags_ptsz),
    RMM_EMU_PROC(cuStreamGetDevice, 12080, cuStreamGetDevice),
    RMM_EMU_PROC_PT(cuStreamGetDevice, 12080, ptsz, cuStreamGetDevice_ptsz),
    RMM_EMU_PROC(cuStreamGetCtx, 9020, cuStreamGetCtx),
    RMM_EMU_PROC_PT(cuStreamGetCtx, 9020, ptsz, cuStreamGetCtx_ptsz),
    RMM_EMU_PROC(cuStreamGetCtx, 12050, cuStreamGetCtx_v2),
    RMM_EMU_PROC_PT(cuStreamGetCtx, 12050, ptsz, cuStreamGetCtx_v2_ptsz),
    RMM_EMU_PROC(cuStreamGetId, 12000, cuStreamGetId),
    RMM_EMU_PROC_PT(cuStreamGetId, 12000, ptsz, cuStreamGetId_ptsz),
    RMM_EMU_PROC(cuStreamDestroy, 2000, cuStreamDestroy),
    RMM_EMU_PROC(cuStreamDestroy, 4000, cuStreamDestroy_v2),
    RMM_EMU_PROC(cuStreamWaitEvent, 3020, cuStreamWaitEvent),
    RMM_EMU_PROC_PT(cuStreamWaitEvent, 7000, ptsz, cuStreamWaitEvent_ptsz),
    RMM_EMU_PROC(cuStreamAddCallback, 5000, cuStreamAddCallback),
    RMM_EMU_PROC_PT(cuStreamAddCallback, 7000, ptsz, cuStreamAddCallback_ptsz),
    RMM_EMU_PROC(cuStreamSynchronize, 2000, cuStreamSynchronize),
    RMM_EMU_PROC_PT(cuStreamSynchronize, 7000, ptsz, cuStreamSynchronize_ptsz),
    RMM_EMU_PROC(cuStreamQuery, 2000, cuStreamQuery),
    RMM_EMU_PROC_PT(cuStreamQuery, 7000, ptsz, cuStreamQuery_ptsz),
    RMM_EMU_PROC(cuStreamBeginCapture, 10000, cuStreamBeginCapture),
    RMM_EMU_PROC_PT(cuStreamBeginCapture, 10000, ptsz, cuStreamBeginCapture_ptsz),
    RMM_EMU_PROC(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2),
    RMM_EMU_PROC_PT(cuStreamBeginCapture, 10010, ptsz, cuStreamBeginCapture_v2_ptsz),
    RMM_EMU_PROC(cuStreamEndCapture, 10000, cuStreamEndCapture),
    RMM_EMU_PROC_PT(cuStreamEndCapture, 10000, ptsz, cuStreamEndCapture_ptsz),
    RMM_EMU_PROC(cuStreamIsCapturing, 10000, cuStreamIsCapturing),
    RMM_EMU_PROC_PT(cuStreamIsCapturing, 10000, ptsz, cuStreamIsCapturing_ptsz),
    RMM_EMU_PROC(cuStreamGetCaptureInfo, 10010, cuStreamGetCaptureInfo),
    RMM_EMU_PROC_PT(cuStreamGetCaptureInfo, 10010, ptsz, cuStreamGetCaptureInfo_ptsz),
    RMM_EMU_PROC(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2),
    RMM_EMU_PROC_PT(cuStreamGetCaptureInfo, 11030, ptsz, cuStreamGetCaptureInfo_v2_ptsz),
    RMM_EMU_PROC(cuStreamGetCaptureInfo, 12030, cuStreamGetCaptureInfo_v3),
    RMM_EMU_PROC_PT(cuStreamGetCaptureInfo, 12030, ptsz, cuStreamGetCaptureInfo_v3_ptsz),
    RMM_EMU_PROC(cuThreadExchangeStreamCaptureMode, 10010, cuThreadExchangeStreamCaptureMode),
    RMM_EMU_PROC(cuLaunchHostFunc, 10000, cuLaunchHostFunc),
    RMM_EMU_PROC_PT(cuLaunchHostFunc, 10000, ptsz, cuLaunchHostFunc_ptsz),
    // events
    RMM_EMU_PROC(cuEventCreate, 2000, cuEventCreate),
    RMM_EMU_PROC(cuEventRecord, 2000, cuEventRecord),
    RMM_EMU_PROC_PT(cuEventRecord, 7000, ptsz, cuEventRecord_ptsz),
    RMM_EMU_PROC(cuEventRecordWithFlags, 11010, cuEventRecordWithFlags),
    RMM_EMU_PROC_PT(cuEventRecordWithFlags, 11010, ptsz, cuEventRecordWithFlags_ptsz),
    RMM_EMU_PROC(cuEventQuery, 2000, cuEventQuery),
    RMM_EMU_PROC(cuEventSynchronize, 2000, cuEventSynchronize),
    RMM_EMU_PROC(cuEventDestroy, 2000, cuEventDestroy),
    RMM_EMU_PROC(cuEventDestroy, 4000, cuEventDestroy_v2),
    RMM_EMU_PROC(cuEventElapsedTime, 2000, cuEventElapsedTime),
    RMM_EMU_PROC(cuEventElapsedTime, 12080, cuEventElapsedTime_v2),
  };
#define RMM_EMU_UNIMPLEMENTED(base, ver, per_thread) \
  all->push_back(Entry{#base, ver, per_thread, reinterpret_cast<void*>(&unimplemented_##base##_##ver##_##per_thread)});
#include "unimplemented.inc"
#undef RMM_EMU_UNIMPLEMENTED
  return all;
  }();
  return *table;
}
// clang-format on
#undef RMM_EMU_PROC
#undef RMM_EMU_PROC_PT

// Base name -> its variants, oldest first.
std::unordered_map<std::string_view, std::vector<Entry const*>> const& index()
{
  static auto const* idx = [] {
    auto* m = new std::unordered_map<std::string_view, std::vector<Entry const*>>;
    for (auto const& e : entries()) { (*m)[e.base].push_back(&e); }
    for (auto& [name, list] : *m) {
      std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->version < b->version; });
    }
    return m;
  }();
  return *idx;
}

Entry const* newest(std::vector<Entry const*> const& variants, int cuda_version, bool per_thread)
{
  Entry const* best = nullptr;
  for (auto const* e : variants) {
    if (e->per_thread == per_thread && e->version <= cuda_version) { best = e; }
  }
  return best;
}

}  // namespace

CUresult get_proc_address(char const* symbol,
                          void** pfn,
                          int cuda_version,
                          cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status)
{
  auto const report = [&](CUdriverProcAddressQueryResult s) {
    if (status != nullptr) { *status = s; }
  };
  if (symbol == nullptr || pfn == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (flags != CU_GET_PROC_ADDRESS_DEFAULT && flags != CU_GET_PROC_ADDRESS_LEGACY_STREAM &&
      flags != CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pfn = nullptr;
  // "If the specified CUDA version is greater than the driver version, the API will return
  // CUDA_ERROR_INVALID_VALUE" (cuda.h).
  if (cuda_version > kDriverVersion) { return CUDA_ERROR_INVALID_VALUE; }
  // The real libcudart's first request is ("", 0, 0); the H200 driver answered CUDA_SUCCESS.
  if (symbol[0] == '\0') {
    report(CU_GET_PROC_ADDRESS_SUCCESS);
    return CUDA_SUCCESS;
  }
  auto const it = index().find(symbol);
  if (it == index().end()) {
    report(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    return CUDA_ERROR_NOT_FOUND;
  }
  Entry const* e = newest(it->second, cuda_version, false);
  if (flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
    // The per-thread flavour of the same ABI generation; never an older signature.
    Entry const* pt = newest(it->second, cuda_version, true);
    if (pt != nullptr && (e == nullptr || pt->version >= e->version)) { e = pt; }
  }
  if (e == nullptr) {
    report(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = e->fn;
  report(CU_GET_PROC_ADDRESS_SUCCESS);
  return CUDA_SUCCESS;
}

}  // namespace rmm_emu
