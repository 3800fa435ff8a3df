// SPDX-License-Identifier: Apache-2.0
// Runtime API: what nvcc-generated code calls (fat-binary registration, launch configuration,
// launches), driver entry points, and the pure helpers. Registration is accepted so nvcc-built
// programs load; launches fail, because device code cannot run here.
#include "rt.hpp"

#include <vector>

using namespace rmm_emu::rt;

// Declared by crt/host_runtime.h and crt/device_functions.h for nvcc's generated code only.
extern "C" {
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void __cudaUnregisterFatBinary(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle,
                            char const* hostFun,
                            char* deviceFun,
                            char const* deviceName,
                            int thread_limit,
                            uint3* tid,
                            uint3* bid,
                            dim3* bDim,
                            dim3* gDim,
                            int* wSize);
void __cudaRegisterVar(void** fatCubinHandle,
                       char* hostVar,
                       char* deviceAddress,
                       char const* deviceName,
                       int ext,
                       size_t size,
                       int constant,
                       int global);
void __cudaRegisterManagedVar(void** fatCubinHandle,
                              void** hostVarPtrAddress,
                              char* deviceAddress,
                              char const* deviceName,
                              int ext,
                              size_t size,
                              int constant,
                              int global);
char __cudaInitModule(void** fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, CUstream_st* stream);
cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream);
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, void const* entryFuncAddr);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel,
                               dim3 gridDim,
                               dim3 blockDim,
                               void** args,
                               size_t sharedMem,
                               cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel,
                                    dim3 gridDim,
                                    dim3 blockDim,
                                    void** args,
                                    size_t sharedMem,
                                    cudaStream_t stream);
}

namespace {

// <<<grid, block, shmem, stream>>> pushes a configuration that the launch stub pops.
struct CallConfiguration {
  dim3 grid;
  dim3 block;
  size_t shared_mem;
  cudaStream_t stream;
};
thread_local std::vector<CallConfiguration> t_configurations;

cudaError_t launch()
{
  if (unloading()) { return cudaErrorCudartUnloading; }
  note_once("kernel launches are not emulated; run gpu-labelled tests on a GPU");
  return record(cudaErrorNotSupported);
}

cudaError_t entry_point(char const* symbol,
                        void** fn,
                        int version,
                        unsigned long long flags,
                        cudaDriverEntryPointQueryResult* status,
                        bool pt)
{
  RMM_RT_ENTER();
  if (symbol == nullptr || fn == nullptr) { return record(cudaErrorInvalidValue); }
  cuuint64_t cu_flags = 0;
  switch (flags) {
    case cudaEnableDefault:
      cu_flags = pt ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
      break;
    case cudaEnableLegacyStream: cu_flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM; break;
    case cudaEnablePerThreadDefaultStream: cu_flags = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM; break;
    default: return record(cudaErrorInvalidValue);
  }
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult const r                  = driver().getProcAddress(symbol, fn, version, cu_flags, &st);
  // The query-result enums share their values.
  if (status != nullptr) { *status = static_cast<cudaDriverEntryPointQueryResult>(st); }
  return result(r);
}

}  // namespace

RMM_RT_EXPORT void** __cudaRegisterFatBinary(void* fatCubin)
{
  // Any non-null handle will do: nothing is ever loaded from it.
  static void* handle_storage[1];
  (void)fatCubin;
  return handle_storage;
}

RMM_RT_EXPORT void __cudaRegisterFatBinaryEnd(void**) {}
RMM_RT_EXPORT void __cudaUnregisterFatBinary(void**) {}
RMM_RT_EXPORT void
__cudaRegisterFunction(void**, char const*, char*, char const*, int, uint3*, uint3*, dim3*, dim3*, int*)
{
}
RMM_RT_EXPORT void __cudaRegisterVar(void**, char*, char*, char const*, int, size_t, int, int) {}
RMM_RT_EXPORT void __cudaRegisterManagedVar(void**, void**, char*, char const*, int, size_t, int, int) {}
RMM_RT_EXPORT char __cudaInitModule(void**) { return 1; }

RMM_RT_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, CUstream_st* stream)
{
  t_configurations.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

RMM_RT_EXPORT cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream)
{
  if (t_configurations.empty()) { return cudaErrorMissingConfiguration; }
  auto const c = t_configurations.back();
  t_configurations.pop_back();
  *gridDim                            = c.grid;
  *blockDim                           = c.block;
  *sharedMem                          = c.shared_mem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

RMM_RT_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, void const* entryFuncAddr)
{
  if (kernel == nullptr) { return cudaErrorInvalidValue; }
  // A stand-in handle; launching it fails anyway.
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(entryFuncAddr));
  return cudaSuccess;
}

RMM_RT_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t)
{
  return launch();
}
RMM_RT_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t)
{
  return launch();
}
RMM_RT_EXPORT cudaError_t cudaLaunchKernel(void const*, dim3, dim3, void**, size_t, cudaStream_t) { return launch(); }
RMM_RT_EXPORT cudaError_t cudaLaunchKernel_ptsz(void const*, dim3, dim3, void**, size_t, cudaStream_t)
{
  return launch();
}
RMM_RT_EXPORT cudaError_t cudaLaunchKernelExC(cudaLaunchConfig_t const*, void const*, void**) { return launch(); }
RMM_RT_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(cudaLaunchConfig_t const*, void const*, void**) { return launch(); }
RMM_RT_EXPORT cudaError_t cudaLaunchCooperativeKernel(void const*, dim3, dim3, void**, size_t, cudaStream_t)
{
  return launch();
}
RMM_RT_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(void const*, dim3, dim3, void**, size_t, cudaStream_t)
{
  return launch();
}

RMM_RT_EXPORT cudaError_t cudaGetDriverEntryPoint(char const* symbol,
                                                  void** funcPtr,
                                                  unsigned long long flags,
                                                  cudaDriverEntryPointQueryResult* driverStatus)
{
  return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, false);
}
RMM_RT_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(char const* symbol,
                                                       void** funcPtr,
                                                       unsigned long long flags,
                                                       cudaDriverEntryPointQueryResult* driverStatus)
{
  return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, true);
}
RMM_RT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(char const* symbol,
                                                           void** funcPtr,
                                                           unsigned int cudaVersion,
                                                           unsigned long long flags,
                                                           cudaDriverEntryPointQueryResult* driverStatus)
{
  return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus, false);
}
RMM_RT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(char const* symbol,
                                                                void** funcPtr,
                                                                unsigned int cudaVersion,
                                                                unsigned long long flags,
                                                                cudaDriverEntryPointQueryResult* driverStatus)
{
  return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus, true);
}

RMM_RT_EXPORT cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f)
{
  return cudaChannelFormatDesc{x, y, z, w, f};
}
