// SPDX-License-Identifier: Apache-2.0
// Lazy initialisation: find the driver the way NVIDIA's libcudart does, register the exit handler.
#include "rt.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>

namespace rmm_emu::rt {
namespace {

Driver g_driver{};
std::atomic<bool> g_unloading{false};
cudaError_t g_load_result = cudaErrorInitializationError;
cudaError_t g_init_result = cudaErrorInitializationError;
std::once_flag g_load_once;
std::once_flag g_init_once;

constexpr int kMaxDevices = 64;
std::atomic<bool> g_retained[kMaxDevices];

thread_local int t_device = 0;

// Asks the driver's resolver for one entry point, as cudart does: base name, ABI version, flags,
// and a null status pointer.
template <class F>
bool resolve(PFN_cuGetProcAddress_v12000 resolver, F& out, char const* name, int version, cuuint64_t flags)
{
  void* fn = nullptr;
  if (resolver(name, &fn, version, flags, nullptr) != CUDA_SUCCESS || fn == nullptr) {
    std::fprintf(stderr, "rmm CUDA emulator: the driver has no %s (version %d, flags %llu)\n", name, version,
                 static_cast<unsigned long long>(flags));
    return false;
  }
  out = reinterpret_cast<F>(fn);
  return true;
}

// The field type must be the PFN typedef of (name, version): a mismatch does not compile.
#define RMM_RT_LOAD(field, name, ver)                                    \
  static_assert(std::is_same_v<decltype(d.field), PFN_##name##_v##ver>); \
  ok = resolve(r, d.field, #name, ver, CU_GET_PROC_ADDRESS_DEFAULT) && ok
#define RMM_RT_LOAD_PT(field, name, ver, pt_ver, flavour)                                          \
  static_assert(std::is_same_v<decltype(d.field.legacy), PFN_##name##_v##ver>);                    \
  static_assert(std::is_same_v<decltype(d.field.per_thread), PFN_##name##_v##pt_ver##_##flavour>); \
  ok = resolve(r, d.field.legacy, #name, ver, CU_GET_PROC_ADDRESS_DEFAULT) && ok;                  \
  ok = resolve(r, d.field.per_thread, #name, pt_ver, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && ok

cudaError_t load()
{
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) { return cudaErrorInsufficientDriver; }
  // A plain dlsym, so that an LD_PRELOADed dlsym sees this lookup.
  auto* first = reinterpret_cast<PFN_cuGetProcAddress_v12000>(::dlsym(lib, "cuGetProcAddress_v2"));
  if (first == nullptr) { return cudaErrorInsufficientDriver; }

  Driver d{};
  bool ok = true;
  // The opening moves of NVIDIA's libcudart 13 (tests/emulator/probe/h200_getproc_order.txt):
  // an empty probe, cuInit, then the resolver asked for itself; the rest goes through that answer.
  void* ignored = nullptr;
  first("", &ignored, 0, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  {
    auto r = first;
    RMM_RT_LOAD(init, cuInit, 2000);
    PFN_cuGetProcAddress_v11030 v1 = nullptr;
    ok                             = resolve(r, v1, "cuGetProcAddress", 11030, CU_GET_PROC_ADDRESS_DEFAULT) && ok;
    RMM_RT_LOAD(getProcAddress, cuGetProcAddress, 12000);
  }
  if (!ok) { return cudaErrorInsufficientDriver; }
  auto r = d.getProcAddress;
  RMM_RT_LOAD(deviceGet, cuDeviceGet, 2000);
  RMM_RT_LOAD(deviceGetCount, cuDeviceGetCount, 2000);
  RMM_RT_LOAD(deviceGetName, cuDeviceGetName, 2000);
  RMM_RT_LOAD(deviceTotalMem, cuDeviceTotalMem, 3020);
  RMM_RT_LOAD(deviceGetAttribute, cuDeviceGetAttribute, 2000);
  RMM_RT_LOAD(driverGetVersion, cuDriverGetVersion, 2020);
  RMM_RT_LOAD(deviceGetUuid, cuDeviceGetUuid, 11040);
  RMM_RT_LOAD(deviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, 11020);
  RMM_RT_LOAD(deviceSetMemPool, cuDeviceSetMemPool, 11020);
  RMM_RT_LOAD(deviceGetMemPool, cuDeviceGetMemPool, 11020);
  RMM_RT_LOAD(memGetDefaultMemPool, cuMemGetDefaultMemPool, 13000);
  RMM_RT_LOAD(memGetMemPool, cuMemGetMemPool, 13000);
  RMM_RT_LOAD(primaryCtxRetain, cuDevicePrimaryCtxRetain, 7000);
  RMM_RT_LOAD(primaryCtxRelease, cuDevicePrimaryCtxRelease, 11000);
  RMM_RT_LOAD(primaryCtxSetFlags, cuDevicePrimaryCtxSetFlags, 11000);
  RMM_RT_LOAD(primaryCtxGetState, cuDevicePrimaryCtxGetState, 7000);
  RMM_RT_LOAD(primaryCtxReset, cuDevicePrimaryCtxReset, 11000);
  RMM_RT_LOAD(ctxSetCurrent, cuCtxSetCurrent, 4000);
  RMM_RT_LOAD(ctxGetCurrent, cuCtxGetCurrent, 4000);
  RMM_RT_LOAD(ctxGetDevice, cuCtxGetDevice, 2000);
  RMM_RT_LOAD(ctxGetStreamPriorityRange, cuCtxGetStreamPriorityRange, 5050);
  RMM_RT_LOAD(ctxSynchronize, cuCtxSynchronize, 2000);
  RMM_RT_LOAD(memGetInfo, cuMemGetInfo, 3020);
  RMM_RT_LOAD(memAllocManaged, cuMemAllocManaged, 6000);
  RMM_RT_LOAD(memAlloc, cuMemAlloc, 3020);
  RMM_RT_LOAD(memFree, cuMemFree, 3020);
  RMM_RT_LOAD(memGetAddressRange, cuMemGetAddressRange, 3020);
  RMM_RT_LOAD(memFreeHost, cuMemFreeHost, 2000);
  RMM_RT_LOAD(memHostAlloc, cuMemHostAlloc, 2020);
  RMM_RT_LOAD(memHostGetDevicePointer, cuMemHostGetDevicePointer, 3020);
  RMM_RT_LOAD(memHostGetFlags, cuMemHostGetFlags, 2030);
  RMM_RT_LOAD(pointerGetAttribute, cuPointerGetAttribute, 4000);
  RMM_RT_LOAD(pointerGetAttributes, cuPointerGetAttributes, 7000);
  RMM_RT_LOAD(texObjectCreate, cuTexObjectCreate, 5000);
  RMM_RT_LOAD(texObjectDestroy, cuTexObjectDestroy, 5000);
  RMM_RT_LOAD_PT(memAllocAsync, cuMemAllocAsync, 11020, 11020, ptsz);
  RMM_RT_LOAD_PT(memAllocFromPoolAsync, cuMemAllocFromPoolAsync, 11020, 11020, ptsz);
  RMM_RT_LOAD_PT(memFreeAsync, cuMemFreeAsync, 11020, 11020, ptsz);
  RMM_RT_LOAD(memPoolTrimTo, cuMemPoolTrimTo, 11020);
  RMM_RT_LOAD(memPoolSetAttribute, cuMemPoolSetAttribute, 11020);
  RMM_RT_LOAD(memPoolGetAttribute, cuMemPoolGetAttribute, 11020);
  RMM_RT_LOAD(memPoolSetAccess, cuMemPoolSetAccess, 11020);
  RMM_RT_LOAD(memPoolGetAccess, cuMemPoolGetAccess, 11020);
  RMM_RT_LOAD(memPoolCreate, cuMemPoolCreate, 11020);
  RMM_RT_LOAD(memPoolDestroy, cuMemPoolDestroy, 11020);
  RMM_RT_LOAD(memPoolExportToShareableHandle, cuMemPoolExportToShareableHandle, 11020);
  RMM_RT_LOAD_PT(memcpy, cuMemcpy, 4000, 7000, ptds);
  RMM_RT_LOAD_PT(memcpyAsync, cuMemcpyAsync, 4000, 7000, ptsz);
  RMM_RT_LOAD_PT(memcpyPeer, cuMemcpyPeer, 4000, 7000, ptds);
  RMM_RT_LOAD_PT(memcpyPeerAsync, cuMemcpyPeerAsync, 4000, 7000, ptsz);
  RMM_RT_LOAD_PT(memcpyHtoD, cuMemcpyHtoD, 3020, 7000, ptds);
  RMM_RT_LOAD_PT(memcpyHtoDAsync, cuMemcpyHtoDAsync, 3020, 7000, ptsz);
  RMM_RT_LOAD_PT(memcpyDtoH, cuMemcpyDtoH, 3020, 7000, ptds);
  RMM_RT_LOAD_PT(memcpyDtoHAsync, cuMemcpyDtoHAsync, 3020, 7000, ptsz);
  RMM_RT_LOAD_PT(memcpyDtoD, cuMemcpyDtoD, 3020, 7000, ptds);
  RMM_RT_LOAD_PT(memcpyDtoDAsync, cuMemcpyDtoDAsync, 3020, 7000, ptsz);
  RMM_RT_LOAD_PT(memsetD8, cuMemsetD8, 3020, 7000, ptds);
  RMM_RT_LOAD_PT(memsetD8Async, cuMemsetD8Async, 3020, 7000, ptsz);
  RMM_RT_LOAD_PT(launchHostFunc, cuLaunchHostFunc, 10000, 10000, ptsz);
  RMM_RT_LOAD(eventCreate, cuEventCreate, 2000);
  RMM_RT_LOAD_PT(eventRecord, cuEventRecord, 2000, 7000, ptsz);
  RMM_RT_LOAD_PT(eventRecordWithFlags, cuEventRecordWithFlags, 11010, 11010, ptsz);
  RMM_RT_LOAD(eventQuery, cuEventQuery, 2000);
  RMM_RT_LOAD(eventSynchronize, cuEventSynchronize, 2000);
  RMM_RT_LOAD(eventDestroy, cuEventDestroy, 4000);
  RMM_RT_LOAD(eventElapsedTime, cuEventElapsedTime, 12080);
  RMM_RT_LOAD(streamCreate, cuStreamCreate, 2000);
  RMM_RT_LOAD(streamCreateWithPriority, cuStreamCreateWithPriority, 5050);
  RMM_RT_LOAD_PT(streamGetPriority, cuStreamGetPriority, 5050, 7000, ptsz);
  RMM_RT_LOAD_PT(streamGetFlags, cuStreamGetFlags, 5050, 7000, ptsz);
  RMM_RT_LOAD_PT(streamGetDevice, cuStreamGetDevice, 12080, 12080, ptsz);
  RMM_RT_LOAD_PT(streamGetId, cuStreamGetId, 12000, 12000, ptsz);
  RMM_RT_LOAD(streamDestroy, cuStreamDestroy, 4000);
  RMM_RT_LOAD_PT(streamWaitEvent, cuStreamWaitEvent, 3020, 7000, ptsz);
  RMM_RT_LOAD_PT(streamAddCallback, cuStreamAddCallback, 5000, 7000, ptsz);
  RMM_RT_LOAD_PT(streamSynchronize, cuStreamSynchronize, 2000, 7000, ptsz);
  RMM_RT_LOAD_PT(streamQuery, cuStreamQuery, 2000, 7000, ptsz);
  RMM_RT_LOAD(deviceCanAccessPeer, cuDeviceCanAccessPeer, 4000);
  RMM_RT_LOAD(ctxEnablePeerAccess, cuCtxEnablePeerAccess, 4000);
  RMM_RT_LOAD(ctxDisablePeerAccess, cuCtxDisablePeerAccess, 4000);
  RMM_RT_LOAD(memAdvise, cuMemAdvise, 12020);
  RMM_RT_LOAD(memRangeGetAttribute, cuMemRangeGetAttribute, 8000);
  RMM_RT_LOAD_PT(memPrefetchAsync, cuMemPrefetchAsync, 12020, 12020, ptsz);
  RMM_RT_LOAD(getErrorString, cuGetErrorString, 6000);
  RMM_RT_LOAD(getErrorName, cuGetErrorName, 6000);
  RMM_RT_LOAD_PT(streamBeginCapture, cuStreamBeginCapture, 10010, 10010, ptsz);
  RMM_RT_LOAD_PT(streamEndCapture, cuStreamEndCapture, 10000, 10000, ptsz);
  RMM_RT_LOAD_PT(streamIsCapturing, cuStreamIsCapturing, 10000, 10000, ptsz);
  RMM_RT_LOAD_PT(streamGetCaptureInfo, cuStreamGetCaptureInfo, 12030, 12030, ptsz);
  RMM_RT_LOAD(threadExchangeStreamCaptureMode, cuThreadExchangeStreamCaptureMode, 10010);
  if (!ok) { return cudaErrorInsufficientDriver; }
  g_driver = d;
  return cudaSuccess;
}
#undef RMM_RT_LOAD
#undef RMM_RT_LOAD_PT

// Registered at initialisation, like NVIDIA's: after it ran, calls return cudaErrorCudartUnloading
// (static destructors that free CUDA memory see that error, not a crash). No CUDA work happens here.
void on_exit() { g_unloading.store(true); }

}  // namespace

Driver const& driver() { return g_driver; }

bool unloading() { return g_unloading.load(std::memory_order_relaxed); }

cudaError_t load_driver()
{
  std::call_once(g_load_once, [] { g_load_result = load(); });
  return g_load_result;
}

cudaError_t enter(bool context)
{
  if (unloading()) { return cudaErrorCudartUnloading; }
  std::call_once(g_init_once, [] {
    g_init_result = load_driver();
    if (g_init_result != cudaSuccess) { return; }
    std::atexit(on_exit);
    CUresult const r = g_driver.init(0);
    g_init_result    = r == CUDA_SUCCESS           ? cudaSuccess
                       : r == CUDA_ERROR_NO_DEVICE ? cudaErrorNoDevice
                                                   : cudaErrorInitializationError;
  });
  if (g_init_result != cudaSuccess) { return record(g_init_result); }
  if (!context) { return cudaSuccess; }
  CUcontext ctx = nullptr;
  if (g_driver.ctxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != nullptr) { return cudaSuccess; }
  return record(activate_device(t_device));
}

cudaError_t current_device(int& device)
{
  CUcontext ctx = nullptr;
  if (g_driver.ctxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != nullptr) {
    CUdevice d = 0;
    if (g_driver.ctxGetDevice(&d) == CUDA_SUCCESS) {
      device = d;
      return cudaSuccess;
    }
  }
  device = t_device;
  return cudaSuccess;
}

cudaError_t activate_device(int device)
{
  CUdevice dev = 0;
  if (auto r = g_driver.deviceGet(&dev, device); r != CUDA_SUCCESS) { return to_runtime(r); }
  if (device >= kMaxDevices) { return cudaErrorInvalidDevice; }
  CUcontext ctx = nullptr;
  if (!g_retained[device].exchange(true)) {
    if (auto r = g_driver.primaryCtxRetain(&ctx, dev); r != CUDA_SUCCESS) {
      g_retained[device].store(false);
      return to_runtime(r);
    }
  } else {
    // Already retained once for this process: fetch the handle without another reference.
    if (auto r = g_driver.primaryCtxRetain(&ctx, dev); r != CUDA_SUCCESS) { return to_runtime(r); }
    g_driver.primaryCtxRelease(dev);
  }
  if (auto r = g_driver.ctxSetCurrent(ctx); r != CUDA_SUCCESS) { return to_runtime(r); }
  t_device = device;
  return cudaSuccess;
}

void forget_device(int device)
{
  if (device >= 0 && device < kMaxDevices) { g_retained[device].store(false); }
}

void note_once(char const* what)
{
  static std::mutex m;
  static auto* seen = new std::set<std::string>;
  std::lock_guard lock(m);
  if (seen->insert(what).second) { std::fprintf(stderr, "rmm CUDA emulator: %s\n", what); }
}

}  // namespace rmm_emu::rt
