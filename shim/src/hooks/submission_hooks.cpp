// SPDX-License-Identifier: Apache-2.0
// The wrappers of every driver entry point that submits work to a stream (entry_points.def lists
// them): each forwards the call unchanged, and tells program_streams about work on a non-blocking
// stream, so that a free knows which streams may still use its block. A call on the legacy or
// per-thread stream, or on a blocking one, costs a compare and a lookup.

#include "driver/wrappers.hpp"
#include "serving/dispatch.hpp"
#include "frees/program_streams.hpp"
#include "driver/real_driver.hpp"
#include "state.hpp"
#include "visibility.hpp"

namespace {

using rmm::shim::real;

/// Calls `real_function(args...)`, which submits work to `stream`: behind the stream's fence when
/// it owes one, and counted on it.
template <class Fn, class... Args>
CUresult submit_on(CUstream stream, Fn real_function, Args... args)
{
  if (real_function == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto& streams = rmm::shim::state().streams;
  auto* watched = streams.find(stream);
  if (watched == nullptr) [[likely]] { return real_function(args...); }
  streams.before_submission(*watched);
  auto const result = real_function(args...);
  streams.after_submission(*watched);  // counted even when refused: a stream once busy is asked
  return result;
}

}  // namespace

RMM_SHIM_EXPORT CUresult cuMemcpyAsync(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t ByteCount, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_async, dst, src, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t ByteCount, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_async_ptsz, dst, src, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr_v2 dstDevice,
                                           CUcontext dstContext,
                                           CUdeviceptr_v2 srcDevice,
                                           CUcontext srcContext,
                                           size_t ByteCount,
                                           CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_peer_async, dstDevice, dstContext, srcDevice, srcContext, ByteCount,
                   hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr_v2 dstDevice,
                                                CUcontext dstContext,
                                                CUdeviceptr_v2 srcDevice,
                                                CUcontext srcContext,
                                                size_t ByteCount,
                                                CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_peer_async_ptsz, dstDevice, dstContext, srcDevice, srcContext, ByteCount,
                   hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr_v2 dstDevice,
                                              const void* srcHost,
                                              size_t ByteCount,
                                              CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_htod_async, dstDevice, srcHost, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr_v2 dstDevice,
                                                   const void* srcHost,
                                                   size_t ByteCount,
                                                   CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_htod_async_ptsz, dstDevice, srcHost, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dstHost,
                                              CUdeviceptr_v2 srcDevice,
                                              size_t ByteCount,
                                              CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_dtoh_async, dstHost, srcDevice, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void* dstHost,
                                                   CUdeviceptr_v2 srcDevice,
                                                   size_t ByteCount,
                                                   CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_dtoh_async_ptsz, dstHost, srcDevice, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr_v2 dstDevice,
                                              CUdeviceptr_v2 srcDevice,
                                              size_t ByteCount,
                                              CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_dtod_async, dstDevice, srcDevice, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr_v2 dstDevice,
                                                   CUdeviceptr_v2 srcDevice,
                                                   size_t ByteCount,
                                                   CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_dtod_async_ptsz, dstDevice, srcDevice, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult
cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_htoa_async, dstArray, dstOffset, srcHost, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult
cuMemcpyHtoAAsync_v2_ptsz(CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_htoa_async_ptsz, dstArray, dstOffset, srcHost, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult
cuMemcpyAtoHAsync_v2(void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_atoh_async, dstHost, srcArray, srcOffset, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult
cuMemcpyAtoHAsync_v2_ptsz(void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_atoh_async_ptsz, dstHost, srcArray, srcOffset, ByteCount, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D_v2* pCopy, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_2d_async, pCopy, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D_v2* pCopy, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_2d_async_ptsz, pCopy, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D_v2* pCopy, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_3d_async, pCopy, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D_v2* pCopy, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_3d_async_ptsz, pCopy, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER_v1* pCopy, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_3d_peer_async, pCopy, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER_v1* pCopy, CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_3d_peer_async_ptsz, pCopy, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD8Async(CUdeviceptr_v2 dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
  return submit_on(hStream, real()->memset_d8_async, dstDevice, uc, N, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr_v2 dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
  return submit_on(hStream, real()->memset_d8_async_ptsz, dstDevice, uc, N, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD16Async(CUdeviceptr_v2 dstDevice, unsigned short us, size_t N, CUstream hStream)
{
  return submit_on(hStream, real()->memset_d16_async, dstDevice, us, N, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr_v2 dstDevice, unsigned short us, size_t N, CUstream hStream)
{
  return submit_on(hStream, real()->memset_d16_async_ptsz, dstDevice, us, N, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD32Async(CUdeviceptr_v2 dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
  return submit_on(hStream, real()->memset_d32_async, dstDevice, ui, N, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr_v2 dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
  return submit_on(hStream, real()->memset_d32_async_ptsz, dstDevice, ui, N, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr_v2 dstDevice,
                                           size_t dstPitch,
                                           unsigned char uc,
                                           size_t Width,
                                           size_t Height,
                                           CUstream hStream)
{
  return submit_on(hStream, real()->memset_d2d8_async, dstDevice, dstPitch, uc, Width, Height, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr_v2 dstDevice,
                                                size_t dstPitch,
                                                unsigned char uc,
                                                size_t Width,
                                                size_t Height,
                                                CUstream hStream)
{
  return submit_on(hStream, real()->memset_d2d8_async_ptsz, dstDevice, dstPitch, uc, Width, Height, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr_v2 dstDevice,
                                            size_t dstPitch,
                                            unsigned short us,
                                            size_t Width,
                                            size_t Height,
                                            CUstream hStream)
{
  return submit_on(hStream, real()->memset_d2d16_async, dstDevice, dstPitch, us, Width, Height, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr_v2 dstDevice,
                                                 size_t dstPitch,
                                                 unsigned short us,
                                                 size_t Width,
                                                 size_t Height,
                                                 CUstream hStream)
{
  return submit_on(hStream, real()->memset_d2d16_async_ptsz, dstDevice, dstPitch, us, Width, Height, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr_v2 dstDevice,
                                            size_t dstPitch,
                                            unsigned int ui,
                                            size_t Width,
                                            size_t Height,
                                            CUstream hStream)
{
  return submit_on(hStream, real()->memset_d2d32_async, dstDevice, dstPitch, ui, Width, Height, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr_v2 dstDevice,
                                                 size_t dstPitch,
                                                 unsigned int ui,
                                                 size_t Width,
                                                 size_t Height,
                                                 CUstream hStream)
{
  return submit_on(hStream, real()->memset_d2d32_async_ptsz, dstDevice, dstPitch, ui, Width, Height, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemPrefetchBatchAsync(CUdeviceptr_v2* dptrs,
                                                 size_t* sizes,
                                                 size_t count,
                                                 CUmemLocation_v1* prefetchLocs,
                                                 size_t* prefetchLocIdxs,
                                                 size_t numPrefetchLocs,
                                                 unsigned long long flags,
                                                 CUstream hStream)
{
  return submit_on(hStream, real()->mem_prefetch_batch_async, dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,
                   numPrefetchLocs, flags, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemPrefetchBatchAsync_ptsz(CUdeviceptr_v2* dptrs,
                                                      size_t* sizes,
                                                      size_t count,
                                                      CUmemLocation_v1* prefetchLocs,
                                                      size_t* prefetchLocIdxs,
                                                      size_t numPrefetchLocs,
                                                      unsigned long long flags,
                                                      CUstream hStream)
{
  return submit_on(hStream, real()->mem_prefetch_batch_async_ptsz, dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,
                   numPrefetchLocs, flags, hStream);
}

RMM_SHIM_EXPORT CUresult
cuMemDiscardBatchAsync(CUdeviceptr_v2* dptrs, size_t* sizes, size_t count, unsigned long long flags, CUstream hStream)
{
  return submit_on(hStream, real()->mem_discard_batch_async, dptrs, sizes, count, flags, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemDiscardBatchAsync_ptsz(CUdeviceptr_v2* dptrs,
                                                     size_t* sizes,
                                                     size_t count,
                                                     unsigned long long flags,
                                                     CUstream hStream)
{
  return submit_on(hStream, real()->mem_discard_batch_async_ptsz, dptrs, sizes, count, flags, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr_v2* dptrs,
                                                           size_t* sizes,
                                                           size_t count,
                                                           CUmemLocation_v1* prefetchLocs,
                                                           size_t* prefetchLocIdxs,
                                                           size_t numPrefetchLocs,
                                                           unsigned long long flags,
                                                           CUstream hStream)
{
  return submit_on(hStream, real()->mem_discard_and_prefetch_batch_async, dptrs, sizes, count, prefetchLocs,
                   prefetchLocIdxs, numPrefetchLocs, flags, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemDiscardAndPrefetchBatchAsync_ptsz(CUdeviceptr_v2* dptrs,
                                                                size_t* sizes,
                                                                size_t count,
                                                                CUmemLocation_v1* prefetchLocs,
                                                                size_t* prefetchLocIdxs,
                                                                size_t numPrefetchLocs,
                                                                unsigned long long flags,
                                                                CUstream hStream)
{
  return submit_on(hStream, real()->mem_discard_and_prefetch_batch_async_ptsz, dptrs, sizes, count, prefetchLocs,
                   prefetchLocIdxs, numPrefetchLocs, flags, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemBatchDecompressAsync(CUmemDecompressParams* paramsArray,
                                                   size_t count,
                                                   unsigned int flags,
                                                   size_t* errorIndex,
                                                   CUstream stream)
{
  return submit_on(stream, real()->mem_batch_decompress_async, paramsArray, count, flags, errorIndex, stream);
}

RMM_SHIM_EXPORT CUresult cuMemBatchDecompressAsync_ptsz(CUmemDecompressParams* paramsArray,
                                                        size_t count,
                                                        unsigned int flags,
                                                        size_t* errorIndex,
                                                        CUstream stream)
{
  return submit_on(stream, real()->mem_batch_decompress_async_ptsz, paramsArray, count, flags, errorIndex, stream);
}

namespace {
/// A physical allocation mapped into a sparse array is reachable through the array: never reused.
/// One the driver would have destroyed (released, mapped nowhere) is refused, as the driver
/// refuses it. True when the call may go on.
bool note_array_mappings(CUarrayMapInfo_v1 const* list, unsigned int count)
{
  if (!rmm::shim::following_physical_memory()) { return true; }
  auto& cache = rmm::shim::state().physical;
  for (unsigned int i = 0; list != nullptr && i < count; ++i) {
    if (list[i].memHandleType == CU_MEM_HANDLE_TYPE_GENERIC && cache.gone(list[i].memHandle.memHandle)) {
      return false;
    }
  }
  for (unsigned int i = 0; list != nullptr && i < count; ++i) {
    if (list[i].memHandleType == CU_MEM_HANDLE_TYPE_GENERIC) { cache.escaped(list[i].memHandle.memHandle); }
  }
  return true;
}
}  // namespace

RMM_SHIM_EXPORT CUresult cuMemMapArrayAsync(CUarrayMapInfo_v1* mapInfoList, unsigned int count, CUstream hStream)
{
  if (!note_array_mappings(mapInfoList, count)) { return CUDA_ERROR_INVALID_VALUE; }
  return submit_on(hStream, real()->mem_map_array_async, mapInfoList, count, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemMapArrayAsync_ptsz(CUarrayMapInfo_v1* mapInfoList, unsigned int count, CUstream hStream)
{
  if (!note_array_mappings(mapInfoList, count)) { return CUDA_ERROR_INVALID_VALUE; }
  return submit_on(hStream, real()->mem_map_array_async_ptsz, mapInfoList, count, hStream);
}

RMM_SHIM_EXPORT CUresult cuStreamAddCallback(CUstream hStream,
                                             CUstreamCallback callback,
                                             void* userData,
                                             unsigned int flags)
{
  return submit_on(hStream, real()->stream_add_callback, hStream, callback, userData, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream hStream,
                                                  CUstreamCallback callback,
                                                  void* userData,
                                                  unsigned int flags)
{
  return submit_on(hStream, real()->stream_add_callback_ptsz, hStream, callback, userData, flags);
}

RMM_SHIM_EXPORT CUresult cuLaunchKernel(CUfunction f,
                                        unsigned int gridDimX,
                                        unsigned int gridDimY,
                                        unsigned int gridDimZ,
                                        unsigned int blockDimX,
                                        unsigned int blockDimY,
                                        unsigned int blockDimZ,
                                        unsigned int sharedMemBytes,
                                        CUstream hStream,
                                        void** kernelParams,
                                        void** extra)
{
  return submit_on(hStream, real()->launch_kernel, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                   sharedMemBytes, hStream, kernelParams, extra);
}

RMM_SHIM_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f,
                                             unsigned int gridDimX,
                                             unsigned int gridDimY,
                                             unsigned int gridDimZ,
                                             unsigned int blockDimX,
                                             unsigned int blockDimY,
                                             unsigned int blockDimZ,
                                             unsigned int sharedMemBytes,
                                             CUstream hStream,
                                             void** kernelParams,
                                             void** extra)
{
  return submit_on(hStream, real()->launch_kernel_ptsz, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                   blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}

RMM_SHIM_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra)
{
  return submit_on(config == nullptr ? nullptr : config->hStream, real()->launch_kernel_ex, config, f, kernelParams,
                   extra);
}

RMM_SHIM_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config,
                                               CUfunction f,
                                               void** kernelParams,
                                               void** extra)
{
  return submit_on(config == nullptr ? nullptr : config->hStream, real()->launch_kernel_ex_ptsz, config, f,
                   kernelParams, extra);
}

RMM_SHIM_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f,
                                                   unsigned int gridDimX,
                                                   unsigned int gridDimY,
                                                   unsigned int gridDimZ,
                                                   unsigned int blockDimX,
                                                   unsigned int blockDimY,
                                                   unsigned int blockDimZ,
                                                   unsigned int sharedMemBytes,
                                                   CUstream hStream,
                                                   void** kernelParams)
{
  return submit_on(hStream, real()->launch_cooperative_kernel, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                   blockDimZ, sharedMemBytes, hStream, kernelParams);
}

RMM_SHIM_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f,
                                                        unsigned int gridDimX,
                                                        unsigned int gridDimY,
                                                        unsigned int gridDimZ,
                                                        unsigned int blockDimX,
                                                        unsigned int blockDimY,
                                                        unsigned int blockDimZ,
                                                        unsigned int sharedMemBytes,
                                                        CUstream hStream,
                                                        void** kernelParams)
{
  return submit_on(hStream, real()->launch_cooperative_kernel_ptsz, f, gridDimX, gridDimY, gridDimZ, blockDimX,
                   blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams);
}

RMM_SHIM_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData)
{
  return submit_on(hStream, real()->launch_host_func, hStream, fn, userData);
}

RMM_SHIM_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void* userData)
{
  return submit_on(hStream, real()->launch_host_func_ptsz, hStream, fn, userData);
}

RMM_SHIM_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraph, CUstream hStream)
{
  return submit_on(hStream, real()->graph_launch, hGraph, hStream);
}

RMM_SHIM_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
  return submit_on(hStream, real()->graph_launch_ptsz, hGraphExec, hStream);
}

RMM_SHIM_EXPORT CUresult cuGraphUpload(CUgraphExec hGraph, CUstream hStream)
{
  return submit_on(hStream, real()->graph_upload, hGraph, hStream);
}

RMM_SHIM_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
  return submit_on(hStream, real()->graph_upload_ptsz, hGraphExec, hStream);
}

RMM_SHIM_EXPORT CUresult cuSignalExternalSemaphoresAsync(const CUexternalSemaphore* extSemArray,
                                                         const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_v1* paramsArray,
                                                         unsigned int numExtSems,
                                                         CUstream stream)
{
  return submit_on(stream, real()->signal_external_semaphores_async, extSemArray, paramsArray, numExtSems, stream);
}

RMM_SHIM_EXPORT CUresult
cuSignalExternalSemaphoresAsync_ptsz(const CUexternalSemaphore* extSemArray,
                                     const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_v1* paramsArray,
                                     unsigned int numExtSems,
                                     CUstream stream)
{
  return submit_on(stream, real()->signal_external_semaphores_async_ptsz, extSemArray, paramsArray, numExtSems, stream);
}

RMM_SHIM_EXPORT CUresult cuWaitExternalSemaphoresAsync(const CUexternalSemaphore* extSemArray,
                                                       const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_v1* paramsArray,
                                                       unsigned int numExtSems,
                                                       CUstream stream)
{
  return submit_on(stream, real()->wait_external_semaphores_async, extSemArray, paramsArray, numExtSems, stream);
}

RMM_SHIM_EXPORT CUresult cuWaitExternalSemaphoresAsync_ptsz(const CUexternalSemaphore* extSemArray,
                                                            const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_v1* paramsArray,
                                                            unsigned int numExtSems,
                                                            CUstream stream)
{
  return submit_on(stream, real()->wait_external_semaphores_async_ptsz, extSemArray, paramsArray, numExtSems, stream);
}

RMM_SHIM_EXPORT CUresult cuGraphicsMapResources(unsigned int count, CUgraphicsResource* resources, CUstream hStream)
{
  return submit_on(hStream, real()->graphics_map_resources, count, resources, hStream);
}

RMM_SHIM_EXPORT CUresult cuGraphicsMapResources_ptsz(unsigned int count,
                                                     CUgraphicsResource* resources,
                                                     CUstream hStream)
{
  return submit_on(hStream, real()->graphics_map_resources_ptsz, count, resources, hStream);
}

RMM_SHIM_EXPORT CUresult cuGraphicsUnmapResources(unsigned int count, CUgraphicsResource* resources, CUstream hStream)
{
  return submit_on(hStream, real()->graphics_unmap_resources, count, resources, hStream);
}

RMM_SHIM_EXPORT CUresult cuGraphicsUnmapResources_ptsz(unsigned int count,
                                                       CUgraphicsResource* resources,
                                                       CUstream hStream)
{
  return submit_on(hStream, real()->graphics_unmap_resources_ptsz, count, resources, hStream);
}

RMM_SHIM_EXPORT CUresult legacy_cuMemcpyBatchAsync(CUdeviceptr_v2* dsts,
                                                   CUdeviceptr_v2* srcs,
                                                   size_t* sizes,
                                                   size_t count,
                                                   CUmemcpyAttributes_v1* attrs,
                                                   size_t* attrIdxs,
                                                   size_t numAttrs,
                                                   size_t* failIdx,
                                                   CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_batch_async_v1, dsts, srcs, sizes, count, attrs, attrIdxs, numAttrs, failIdx,
                   hStream);
}

RMM_SHIM_EXPORT CUresult legacy_cuMemcpyBatchAsync_ptsz(CUdeviceptr_v2* dsts,
                                                        CUdeviceptr_v2* srcs,
                                                        size_t* sizes,
                                                        size_t count,
                                                        CUmemcpyAttributes_v1* attrs,
                                                        size_t* attrIdxs,
                                                        size_t numAttrs,
                                                        size_t* failIdx,
                                                        CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_batch_async_v1_ptsz, dsts, srcs, sizes, count, attrs, attrIdxs, numAttrs,
                   failIdx, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyBatchAsync_v2(CUdeviceptr_v2* dsts,
                                               CUdeviceptr_v2* srcs,
                                               size_t* sizes,
                                               size_t count,
                                               CUmemcpyAttributes_v1* attrs,
                                               size_t* attrIdxs,
                                               size_t numAttrs,
                                               CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_batch_async, dsts, srcs, sizes, count, attrs, attrIdxs, numAttrs, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr_v2* dsts,
                                                    CUdeviceptr_v2* srcs,
                                                    size_t* sizes,
                                                    size_t count,
                                                    CUmemcpyAttributes_v1* attrs,
                                                    size_t* attrIdxs,
                                                    size_t numAttrs,
                                                    CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_batch_async_ptsz, dsts, srcs, sizes, count, attrs, attrIdxs, numAttrs,
                   hStream);
}

RMM_SHIM_EXPORT CUresult legacy_cuMemcpy3DBatchAsync(size_t numParams,
                                                     CUDA_MEMCPY3D_BATCH_OP_v1* opList,
                                                     size_t* failIdx,
                                                     unsigned long long flags,
                                                     CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_3d_batch_async_v1, numParams, opList, failIdx, flags, hStream);
}

RMM_SHIM_EXPORT CUresult legacy_cuMemcpy3DBatchAsync_ptsz(size_t numParams,
                                                          CUDA_MEMCPY3D_BATCH_OP_v1* opList,
                                                          size_t* failIdx,
                                                          unsigned long long flags,
                                                          CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_3d_batch_async_v1_ptsz, numParams, opList, failIdx, flags, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpy3DBatchAsync_v2(size_t numParams,
                                                 CUDA_MEMCPY3D_BATCH_OP_v1* opList,
                                                 unsigned long long flags,
                                                 CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_3d_batch_async, numParams, opList, flags, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t numParams,
                                                      CUDA_MEMCPY3D_BATCH_OP_v1* opList,
                                                      unsigned long long flags,
                                                      CUstream hStream)
{
  return submit_on(hStream, real()->memcpy_3d_batch_async_ptsz, numParams, opList, flags, hStream);
}

RMM_SHIM_EXPORT CUresult legacy_cuMemPrefetchAsync(CUdeviceptr_v2 devPtr,
                                                   size_t count,
                                                   CUdevice_v1 dstDevice,
                                                   CUstream hStream)
{
  return submit_on(hStream, real()->mem_prefetch_async_v1, devPtr, count, dstDevice, hStream);
}

RMM_SHIM_EXPORT CUresult legacy_cuMemPrefetchAsync_ptsz(CUdeviceptr_v2 devPtr,
                                                        size_t count,
                                                        CUdevice_v1 dstDevice,
                                                        CUstream hStream)
{
  return submit_on(hStream, real()->mem_prefetch_async_v1_ptsz, devPtr, count, dstDevice, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr_v2 devPtr,
                                               size_t count,
                                               CUmemLocation_v1 location,
                                               unsigned int flags,
                                               CUstream hStream)
{
  return submit_on(hStream, real()->mem_prefetch_async, devPtr, count, location, flags, hStream);
}

RMM_SHIM_EXPORT CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr_v2 devPtr,
                                                    size_t count,
                                                    CUmemLocation_v1 location,
                                                    unsigned int flags,
                                                    CUstream hStream)
{
  return submit_on(hStream, real()->mem_prefetch_async_ptsz, devPtr, count, location, flags, hStream);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamWaitValue32(CUstream stream,
                                                    CUdeviceptr_v2 addr,
                                                    cuuint32_t value,
                                                    unsigned int flags)
{
  return submit_on(stream, real()->stream_wait_value32_v1, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamWaitValue32_ptsz(CUstream stream,
                                                         CUdeviceptr_v2 addr,
                                                         cuuint32_t value,
                                                         unsigned int flags)
{
  return submit_on(stream, real()->stream_wait_value32_v1_ptsz, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamWaitValue32_v2(CUstream stream,
                                                CUdeviceptr_v2 addr,
                                                cuuint32_t value,
                                                unsigned int flags)
{
  return submit_on(stream, real()->stream_wait_value32, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamWaitValue32_v2_ptsz(CUstream stream,
                                                     CUdeviceptr_v2 addr,
                                                     cuuint32_t value,
                                                     unsigned int flags)
{
  return submit_on(stream, real()->stream_wait_value32_ptsz, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamWriteValue32(CUstream stream,
                                                     CUdeviceptr_v2 addr,
                                                     cuuint32_t value,
                                                     unsigned int flags)
{
  return submit_on(stream, real()->stream_write_value32_v1, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamWriteValue32_ptsz(CUstream stream,
                                                          CUdeviceptr_v2 addr,
                                                          cuuint32_t value,
                                                          unsigned int flags)
{
  return submit_on(stream, real()->stream_write_value32_v1_ptsz, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamWriteValue32_v2(CUstream stream,
                                                 CUdeviceptr_v2 addr,
                                                 cuuint32_t value,
                                                 unsigned int flags)
{
  return submit_on(stream, real()->stream_write_value32, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamWriteValue32_v2_ptsz(CUstream stream,
                                                      CUdeviceptr_v2 addr,
                                                      cuuint32_t value,
                                                      unsigned int flags)
{
  return submit_on(stream, real()->stream_write_value32_ptsz, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamWaitValue64(CUstream stream,
                                                    CUdeviceptr_v2 addr,
                                                    cuuint64_t value,
                                                    unsigned int flags)
{
  return submit_on(stream, real()->stream_wait_value64_v1, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamWaitValue64_ptsz(CUstream stream,
                                                         CUdeviceptr_v2 addr,
                                                         cuuint64_t value,
                                                         unsigned int flags)
{
  return submit_on(stream, real()->stream_wait_value64_v1_ptsz, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamWaitValue64_v2(CUstream stream,
                                                CUdeviceptr_v2 addr,
                                                cuuint64_t value,
                                                unsigned int flags)
{
  return submit_on(stream, real()->stream_wait_value64, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamWaitValue64_v2_ptsz(CUstream stream,
                                                     CUdeviceptr_v2 addr,
                                                     cuuint64_t value,
                                                     unsigned int flags)
{
  return submit_on(stream, real()->stream_wait_value64_ptsz, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamWriteValue64(CUstream stream,
                                                     CUdeviceptr_v2 addr,
                                                     cuuint64_t value,
                                                     unsigned int flags)
{
  return submit_on(stream, real()->stream_write_value64_v1, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamWriteValue64_ptsz(CUstream stream,
                                                          CUdeviceptr_v2 addr,
                                                          cuuint64_t value,
                                                          unsigned int flags)
{
  return submit_on(stream, real()->stream_write_value64_v1_ptsz, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamWriteValue64_v2(CUstream stream,
                                                 CUdeviceptr_v2 addr,
                                                 cuuint64_t value,
                                                 unsigned int flags)
{
  return submit_on(stream, real()->stream_write_value64, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamWriteValue64_v2_ptsz(CUstream stream,
                                                      CUdeviceptr_v2 addr,
                                                      cuuint64_t value,
                                                      unsigned int flags)
{
  return submit_on(stream, real()->stream_write_value64_ptsz, stream, addr, value, flags);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamBatchMemOp(CUstream stream,
                                                   unsigned int count,
                                                   CUstreamBatchMemOpParams* paramArray,
                                                   unsigned int flags)
{
  return submit_on(stream, real()->stream_batch_mem_op_v1, stream, count, paramArray, flags);
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamBatchMemOp_ptsz(CUstream stream,
                                                        unsigned int count,
                                                        CUstreamBatchMemOpParams_v1* paramArray,
                                                        unsigned int flags)
{
  return submit_on(stream, real()->stream_batch_mem_op_v1_ptsz, stream, count, paramArray, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamBatchMemOp_v2(CUstream stream,
                                               unsigned int count,
                                               CUstreamBatchMemOpParams* paramArray,
                                               unsigned int flags)
{
  return submit_on(stream, real()->stream_batch_mem_op, stream, count, paramArray, flags);
}

RMM_SHIM_EXPORT CUresult cuStreamBatchMemOp_v2_ptsz(CUstream stream,
                                                    unsigned int count,
                                                    CUstreamBatchMemOpParams* paramArray,
                                                    unsigned int flags)
{
  return submit_on(stream, real()->stream_batch_mem_op_ptsz, stream, count, paramArray, flags);
}
