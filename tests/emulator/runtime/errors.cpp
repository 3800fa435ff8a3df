// SPDX-License-Identifier: Apache-2.0
// Error codes: names and descriptions, the driver-to-runtime mapping, the per-thread last error.
#include "rt.hpp"

namespace rmm_emu::rt {
namespace {

thread_local cudaError_t t_last_error = cudaSuccess;

struct ErrorInfo {
  cudaError_t code;
  char const* name;
  char const* text;
};

#define RMM_RT_ERR(code, text) \
  {                            \
    code, #code, text          \
  }
ErrorInfo const kErrors[] = {
  RMM_RT_ERR(cudaSuccess, "no error"),
  RMM_RT_ERR(cudaErrorInvalidValue, "invalid argument"),
  RMM_RT_ERR(cudaErrorMemoryAllocation, "out of memory"),
  RMM_RT_ERR(cudaErrorInitializationError, "initialization error"),
  RMM_RT_ERR(cudaErrorCudartUnloading, "driver shutting down"),
  RMM_RT_ERR(cudaErrorProfilerDisabled, "profiler disabled while using external profiling tool"),
  RMM_RT_ERR(cudaErrorProfilerNotInitialized, "profiler not initialized: call cudaProfilerInitialize()"),
  RMM_RT_ERR(cudaErrorProfilerAlreadyStarted, "profiler already started"),
  RMM_RT_ERR(cudaErrorProfilerAlreadyStopped, "profiler already stopped"),
  RMM_RT_ERR(cudaErrorInvalidConfiguration, "invalid configuration argument"),
  RMM_RT_ERR(cudaErrorInvalidPitchValue, "invalid pitch argument"),
  RMM_RT_ERR(cudaErrorInvalidSymbol, "invalid device symbol"),
  RMM_RT_ERR(cudaErrorInvalidHostPointer, "invalid host pointer"),
  RMM_RT_ERR(cudaErrorInvalidDevicePointer, "invalid device pointer"),
  RMM_RT_ERR(cudaErrorInvalidTexture, "invalid texture reference"),
  RMM_RT_ERR(cudaErrorInvalidTextureBinding, "texture is not bound to a pointer"),
  RMM_RT_ERR(cudaErrorInvalidChannelDescriptor, "invalid channel descriptor"),
  RMM_RT_ERR(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"),
  RMM_RT_ERR(cudaErrorAddressOfConstant, "invalid address of constant"),
  RMM_RT_ERR(cudaErrorTextureFetchFailed, "fetch from texture failed"),
  RMM_RT_ERR(cudaErrorTextureNotBound, "cannot fetch from a texture that is not bound"),
  RMM_RT_ERR(cudaErrorSynchronizationError, "incorrect use of __syncthreads()"),
  RMM_RT_ERR(cudaErrorInvalidFilterSetting, "linear filtering not supported for non-float type"),
  RMM_RT_ERR(cudaErrorInvalidNormSetting, "read as normalized float not supported for 32-bit non float type"),
  RMM_RT_ERR(cudaErrorMixedDeviceExecution, "device emulation mode and device execution mode cannot be mixed"),
  RMM_RT_ERR(cudaErrorNotYetImplemented, "feature not yet implemented"),
  RMM_RT_ERR(cudaErrorMemoryValueTooLarge, "memory size or pointer value too large to fit in 32 bit"),
  RMM_RT_ERR(cudaErrorStubLibrary, "CUDA driver is a stub library"),
  RMM_RT_ERR(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version"),
  RMM_RT_ERR(cudaErrorCallRequiresNewerDriver, "API call is not supported in the installed CUDA driver"),
  RMM_RT_ERR(cudaErrorInvalidSurface, "invalid surface reference"),
  RMM_RT_ERR(cudaErrorDuplicateVariableName, "duplicate global variable looked up by string name"),
  RMM_RT_ERR(cudaErrorDuplicateTextureName, "duplicate texture looked up by string name"),
  RMM_RT_ERR(cudaErrorDuplicateSurfaceName, "duplicate surface looked up by string name"),
  RMM_RT_ERR(cudaErrorDevicesUnavailable, "CUDA-capable device(s) is/are busy or unavailable"),
  RMM_RT_ERR(cudaErrorIncompatibleDriverContext, "incompatible driver context"),
  RMM_RT_ERR(cudaErrorMissingConfiguration, "__global__ function call is not configured"),
  RMM_RT_ERR(cudaErrorPriorLaunchFailure, "unspecified launch failure in prior launch"),
  RMM_RT_ERR(cudaErrorLaunchMaxDepthExceeded, "launch would exceed maximum depth of nested launches"),
  RMM_RT_ERR(cudaErrorLaunchFileScopedTex, "launch failed because kernel uses unsupported, file-scoped textures"),
  RMM_RT_ERR(cudaErrorLaunchFileScopedSurf, "launch failed because kernel uses unsupported, file-scoped surfaces"),
  RMM_RT_ERR(cudaErrorSyncDepthExceeded,
             "cudaDeviceSynchronize failed because caller's grid depth exceeds cudaLimitDevRuntimeSyncDepth"),
  RMM_RT_ERR(cudaErrorLaunchPendingCountExceeded,
             "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount"),
  RMM_RT_ERR(cudaErrorInvalidDeviceFunction, "invalid device function"),
  RMM_RT_ERR(cudaErrorNoDevice, "no CUDA-capable device is detected"),
  RMM_RT_ERR(cudaErrorInvalidDevice, "invalid device ordinal"),
  RMM_RT_ERR(cudaErrorDeviceNotLicensed, "device doesn't have valid Grid license"),
  RMM_RT_ERR(cudaErrorSoftwareValidityNotEstablished, "integrity checks failed"),
  RMM_RT_ERR(cudaErrorStartupFailure, "startup failure in cuda runtime"),
  RMM_RT_ERR(cudaErrorInvalidKernelImage, "device kernel image is invalid"),
  RMM_RT_ERR(cudaErrorDeviceUninitialized, "invalid device context"),
  RMM_RT_ERR(cudaErrorMapBufferObjectFailed, "mapping of buffer object failed"),
  RMM_RT_ERR(cudaErrorUnmapBufferObjectFailed, "unmapping of buffer object failed"),
  RMM_RT_ERR(cudaErrorArrayIsMapped, "array is mapped"),
  RMM_RT_ERR(cudaErrorAlreadyMapped, "resource already mapped"),
  RMM_RT_ERR(cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device"),
  RMM_RT_ERR(cudaErrorAlreadyAcquired, "resource already acquired"),
  RMM_RT_ERR(cudaErrorNotMapped, "resource not mapped"),
  RMM_RT_ERR(cudaErrorNotMappedAsArray, "resource not mapped as array"),
  RMM_RT_ERR(cudaErrorNotMappedAsPointer, "resource not mapped as pointer"),
  RMM_RT_ERR(cudaErrorECCUncorrectable, "uncorrectable ECC error encountered"),
  RMM_RT_ERR(cudaErrorUnsupportedLimit, "limit is not supported on this architecture"),
  RMM_RT_ERR(cudaErrorDeviceAlreadyInUse, "exclusive-thread device already in use by a different thread"),
  RMM_RT_ERR(cudaErrorPeerAccessUnsupported, "peer access is not supported between these two devices"),
  RMM_RT_ERR(cudaErrorInvalidPtx, "a PTX JIT compilation failed"),
  RMM_RT_ERR(cudaErrorInvalidGraphicsContext, "invalid OpenGL or DirectX context"),
  RMM_RT_ERR(cudaErrorNvlinkUncorrectable, "uncorrectable NVLink error detected during the execution"),
  RMM_RT_ERR(cudaErrorJitCompilerNotFound, "PTX JIT compiler library not found"),
  RMM_RT_ERR(cudaErrorUnsupportedPtxVersion, "the provided PTX was compiled with an unsupported toolchain."),
  RMM_RT_ERR(cudaErrorJitCompilationDisabled, "PTX JIT compilation was disabled"),
  RMM_RT_ERR(cudaErrorUnsupportedExecAffinity, "the provided execution affinity is not supported"),
  RMM_RT_ERR(cudaErrorUnsupportedDevSideSync, "the provided PTX contains unsupported call to cudaDeviceSynchronize"),
  RMM_RT_ERR(cudaErrorContained,
             "an exception occurred on the device that is now contained by the GPU's error containment capability"),
  RMM_RT_ERR(cudaErrorInvalidSource, "device kernel image is invalid"),
  RMM_RT_ERR(cudaErrorFileNotFound, "file not found"),
  RMM_RT_ERR(cudaErrorSharedObjectSymbolNotFound, "shared object symbol not found"),
  RMM_RT_ERR(cudaErrorSharedObjectInitFailed, "shared object initialization failed"),
  RMM_RT_ERR(cudaErrorOperatingSystem, "OS call failed or operation not supported on this OS"),
  RMM_RT_ERR(cudaErrorInvalidResourceHandle, "invalid resource handle"),
  RMM_RT_ERR(cudaErrorIllegalState, "the operation cannot be performed in the present state"),
  RMM_RT_ERR(cudaErrorLossyQuery, "attempted introspection would be semantically lossy"),
  RMM_RT_ERR(cudaErrorSymbolNotFound, "named symbol not found"),
  RMM_RT_ERR(cudaErrorNotReady, "device not ready"),
  RMM_RT_ERR(cudaErrorIllegalAddress, "an illegal memory access was encountered"),
  RMM_RT_ERR(cudaErrorLaunchOutOfResources, "too many resources requested for launch"),
  RMM_RT_ERR(cudaErrorLaunchTimeout, "the launch timed out and was terminated"),
  RMM_RT_ERR(cudaErrorLaunchIncompatibleTexturing, "launch uses incompatible texturing mode"),
  RMM_RT_ERR(cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled"),
  RMM_RT_ERR(cudaErrorPeerAccessNotEnabled, "peer access has not been enabled"),
  RMM_RT_ERR(cudaErrorSetOnActiveProcess, "cannot set while device is active in this process"),
  RMM_RT_ERR(cudaErrorContextIsDestroyed, "context is destroyed"),
  RMM_RT_ERR(cudaErrorAssert, "device-side assert triggered"),
  RMM_RT_ERR(cudaErrorTooManyPeers, "peer mapping resources exhausted"),
  RMM_RT_ERR(cudaErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped"),
  RMM_RT_ERR(cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region"),
  RMM_RT_ERR(cudaErrorHardwareStackError, "hardware stack error"),
  RMM_RT_ERR(cudaErrorIllegalInstruction, "an illegal instruction was encountered"),
  RMM_RT_ERR(cudaErrorMisalignedAddress, "misaligned address"),
  RMM_RT_ERR(cudaErrorInvalidAddressSpace, "operation not supported on global/shared address space"),
  RMM_RT_ERR(cudaErrorInvalidPc, "invalid program counter"),
  RMM_RT_ERR(cudaErrorLaunchFailure, "unspecified launch failure"),
  RMM_RT_ERR(cudaErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch"),
  RMM_RT_ERR(cudaErrorTensorMemoryLeak, "tensor memory not completely freed"),
  RMM_RT_ERR(cudaErrorNotPermitted, "operation not permitted"),
  RMM_RT_ERR(cudaErrorNotSupported, "operation not supported"),
  RMM_RT_ERR(cudaErrorSystemNotReady, "system not yet initialized"),
  RMM_RT_ERR(cudaErrorSystemDriverMismatch, "system has unsupported display driver / cuda driver combination"),
  RMM_RT_ERR(cudaErrorCompatNotSupportedOnDevice, "forward compatibility was attempted on non supported HW"),
  RMM_RT_ERR(cudaErrorMpsConnectionFailed, "MPS client failed to connect to the MPS control daemon or the MPS server"),
  RMM_RT_ERR(cudaErrorMpsRpcFailure, "the remote procedural call between the MPS server and the MPS client failed"),
  RMM_RT_ERR(cudaErrorMpsServerNotReady, "MPS server is not ready to accept new MPS client requests"),
  RMM_RT_ERR(cudaErrorMpsMaxClientsReached, "the hardware resources required to create MPS client have been exhausted"),
  RMM_RT_ERR(cudaErrorMpsMaxConnectionsReached,
             "the hardware resources required to support device connections have been exhausted"),
  RMM_RT_ERR(cudaErrorMpsClientTerminated, "the MPS client has been terminated by the server"),
  RMM_RT_ERR(cudaErrorCdpNotSupported,
             "the module is using CUDA Dynamic Parallelism, but the current configuration does not support it"),
  RMM_RT_ERR(cudaErrorCdpVersionMismatch, "the version of CUDA Dynamic Parallelism in the application is incompatible"),
  RMM_RT_ERR(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing"),
  RMM_RT_ERR(cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture"),
  RMM_RT_ERR(cudaErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences"),
  RMM_RT_ERR(cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began"),
  RMM_RT_ERR(cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work"),
  RMM_RT_ERR(cudaErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream"),
  RMM_RT_ERR(cudaErrorStreamCaptureImplicit,
             "operation would make the legacy stream depend on a capturing blocking stream"),
  RMM_RT_ERR(cudaErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream"),
  RMM_RT_ERR(cudaErrorStreamCaptureWrongThread,
             "attempt to terminate a thread-local capture sequence from another thread"),
  RMM_RT_ERR(cudaErrorTimeout, "wait operation timed out"),
  RMM_RT_ERR(cudaErrorGraphExecUpdateFailure,
             "the graph update was not performed because it included changes which violated constraints specific to "
             "instantiated graph update"),
  RMM_RT_ERR(cudaErrorExternalDevice, "an async error has occured in external entity outside of CUDA"),
  RMM_RT_ERR(cudaErrorInvalidClusterSize, "a kernel launch error has occurred due to cluster misconfiguration"),
  RMM_RT_ERR(cudaErrorFunctionNotLoaded,
             "the function handle is not loaded when calling an API that requires a loaded function"),
  RMM_RT_ERR(cudaErrorInvalidResourceType,
             "one or more resources passed in are not valid resource types for the operation"),
  RMM_RT_ERR(cudaErrorInvalidResourceConfiguration,
             "one or more resources are insufficient or non-applicable for the operation"),
  RMM_RT_ERR(cudaErrorUnknown, "unknown error"),
};
#undef RMM_RT_ERR

ErrorInfo const* lookup(cudaError_t code)
{
  for (auto const& e : kErrors) {
    if (e.code == code) { return &e; }
  }
  return nullptr;
}

constexpr char kUnrecognized[] = "unrecognized error code";

}  // namespace

cudaError_t record(cudaError_t e)
{
  // Like the real runtime: "not ready" from a query is an answer, not an error.
  if (e != cudaSuccess && e != cudaErrorNotReady) { t_last_error = e; }
  return e;
}

// The CUDA runtime numbers its errors after the driver's, so most codes carry over unchanged.
cudaError_t to_runtime(CUresult r)
{
  switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
    case CUDA_ERROR_DEINITIALIZED: return cudaErrorCudartUnloading;
    case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
    case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
    case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
    case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
    case CUDA_ERROR_NOT_READY: return cudaErrorNotReady;
    case CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: return cudaErrorPeerAccessAlreadyEnabled;
    case CUDA_ERROR_PEER_ACCESS_NOT_ENABLED: return cudaErrorPeerAccessNotEnabled;
    case CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE: return cudaErrorSetOnActiveProcess;
    case CUDA_ERROR_NOT_PERMITTED: return cudaErrorNotPermitted;
    case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return cudaErrorStreamCaptureUnsupported;
    default: return lookup(static_cast<cudaError_t>(r)) != nullptr ? static_cast<cudaError_t>(r) : cudaErrorUnknown;
  }
}

}  // namespace rmm_emu::rt

using namespace rmm_emu::rt;

// These work before initialisation and after exit: they touch no driver state.
RMM_RT_EXPORT char const* cudaGetErrorName(cudaError_t error)
{
  auto const* e = lookup(error);
  return e != nullptr ? e->name : kUnrecognized;
}

RMM_RT_EXPORT char const* cudaGetErrorString(cudaError_t error)
{
  auto const* e = lookup(error);
  return e != nullptr ? e->text : kUnrecognized;
}

RMM_RT_EXPORT cudaError_t cudaGetLastError(void)
{
  if (unloading()) { return cudaErrorCudartUnloading; }
  cudaError_t const e = t_last_error;
  t_last_error        = cudaSuccess;
  return e;
}

RMM_RT_EXPORT cudaError_t cudaPeekAtLastError(void)
{
  if (unloading()) { return cudaErrorCudartUnloading; }
  return t_last_error;
}

namespace rmm_emu::rt {

// Used by the stubs in unimplemented.cpp, which cannot name cudaError_t.
int stub_status()
{
  if (unloading()) { return cudaErrorCudartUnloading; }
  return record(cudaErrorNotSupported);
}

}  // namespace rmm_emu::rt
