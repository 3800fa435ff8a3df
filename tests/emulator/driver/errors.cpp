// SPDX-License-Identifier: Apache-2.0
#include "errors.hpp"

namespace rmm_emu {
namespace {

struct ErrorInfo {
  CUresult code;
  char const* name;
  char const* text;
};

#define RMM_EMU_ERR(code, text) \
  {                             \
    code, #code, text           \
  }
ErrorInfo const kErrors[] = {
  RMM_EMU_ERR(CUDA_SUCCESS, "no error"),
  RMM_EMU_ERR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
  RMM_EMU_ERR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
  RMM_EMU_ERR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
  RMM_EMU_ERR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
  RMM_EMU_ERR(CUDA_ERROR_PROFILER_DISABLED, "profiler disabled while using external profiling tool"),
  RMM_EMU_ERR(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
  RMM_EMU_ERR(CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable"),
  RMM_EMU_ERR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
  RMM_EMU_ERR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
  RMM_EMU_ERR(CUDA_ERROR_DEVICE_NOT_LICENSED, "device doesn't have valid Grid license"),
  RMM_EMU_ERR(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
  RMM_EMU_ERR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
  RMM_EMU_ERR(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
  RMM_EMU_ERR(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed"),
  RMM_EMU_ERR(CUDA_ERROR_UNMAP_FAILED, "unmapping of buffer object failed"),
  RMM_EMU_ERR(CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped"),
  RMM_EMU_ERR(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
  RMM_EMU_ERR(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
  RMM_EMU_ERR(CUDA_ERROR_ALREADY_ACQUIRED, "resource already acquired"),
  RMM_EMU_ERR(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
  RMM_EMU_ERR(CUDA_ERROR_UNSUPPORTED_LIMIT, "limit is not supported on this architecture"),
  RMM_EMU_ERR(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "exclusive-thread device already in use by a different thread"),
  RMM_EMU_ERR(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices"),
  RMM_EMU_ERR(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
  RMM_EMU_ERR(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
  RMM_EMU_ERR(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found"),
  RMM_EMU_ERR(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed"),
  RMM_EMU_ERR(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS"),
  RMM_EMU_ERR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
  RMM_EMU_ERR(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"),
  RMM_EMU_ERR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
  RMM_EMU_ERR(CUDA_ERROR_NOT_READY, "device not ready"),
  RMM_EMU_ERR(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
  RMM_EMU_ERR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
  RMM_EMU_ERR(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"),
  RMM_EMU_ERR(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"),
  RMM_EMU_ERR(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"),
  RMM_EMU_ERR(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "cannot set while device is active in this process"),
  RMM_EMU_ERR(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
  RMM_EMU_ERR(CUDA_ERROR_ASSERT, "device-side assert triggered"),
  RMM_EMU_ERR(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped"),
  RMM_EMU_ERR(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region"),
  RMM_EMU_ERR(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
  RMM_EMU_ERR(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
  RMM_EMU_ERR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
  RMM_EMU_ERR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"),
  RMM_EMU_ERR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture"),
  RMM_EMU_ERR(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
              "attempt to terminate a thread-local capture sequence from another thread"),
  RMM_EMU_ERR(CUDA_ERROR_TIMEOUT, "wait operation timed out"),
  RMM_EMU_ERR(CUDA_ERROR_UNKNOWN, "unknown error"),
};
#undef RMM_EMU_ERR

ErrorInfo const* lookup(CUresult code)
{
  for (auto const& e : kErrors) {
    if (e.code == code) { return &e; }
  }
  return nullptr;
}

}  // namespace

char const* error_name(CUresult code)
{
  auto const* e = lookup(code);
  return e != nullptr ? e->name : nullptr;
}

char const* error_string(CUresult code)
{
  auto const* e = lookup(code);
  return e != nullptr ? e->text : nullptr;
}

}  // namespace rmm_emu
