#pragma once

// The process's real CUDA driver (libcuda.so.1) and, where the program links it, the shared CUDA
// runtime: resolved with the real dlsym and the real cuGetProcAddress, never through the shim's
// own hooks. Bound once, on first use after the program has loaded the driver: the shim never
// loads CUDA into a process that does not use it.

#include <cuda.h>

#include <atomic>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace rmm::shim {

// Legacy ABIs, whose typedefs cudaTypedefs.h keeps for the driver's own build.
using legacy_ipc_open_mem_handle_fn = CUresult (*)(CUdeviceptr* dptr, CUipcMemHandle handle, unsigned int flags);
using legacy_primary_ctx_reset_fn   = CUresult (*)(CUdevice device);

struct real_driver {
  void* library{};  // libcuda.so.1, as the program loaded it

  PFN_cuGetProcAddress_v12000 get_proc_address_v2{};
  PFN_cuGetProcAddress_v11030 get_proc_address{};

  // Hooked: the shim's wrappers call these when a call passes through.
  PFN_cuMemAlloc_v3020 mem_alloc{};
  PFN_cuMemFree_v3020 mem_free{};
  PFN_cuMemAllocAsync_v11020 mem_alloc_async{};
  PFN_cuMemAllocAsync_v11020_ptsz mem_alloc_async_ptsz{};
  PFN_cuMemFreeAsync_v11020 mem_free_async{};
  PFN_cuMemFreeAsync_v11020_ptsz mem_free_async_ptsz{};
  // Counted only, and may be null (the wrapper then answers CUDA_ERROR_NOT_SUPPORTED).
  PFN_cuMemAllocManaged_v6000 mem_alloc_managed{};
  PFN_cuMemAllocFromPoolAsync_v11020 mem_alloc_from_pool_async{};
  PFN_cuMemAllocFromPoolAsync_v11020_ptsz mem_alloc_from_pool_async_ptsz{};
  PFN_cuMemCreate_v10020 mem_create{};
  PFN_cuMemGetInfo_v3020 mem_get_info{};
  PFN_cuMemGetAddressRange_v3020 mem_get_address_range{};
  PFN_cuIpcGetMemHandle_v4010 ipc_get_mem_handle{};  // may be null: not every driver build has IPC
  PFN_cuIpcOpenMemHandle_v11000 ipc_open_mem_handle{};
  legacy_ipc_open_mem_handle_fn ipc_open_mem_handle_v1{};
  PFN_cuIpcCloseMemHandle_v4010 ipc_close_mem_handle{};
  PFN_cuDeviceSetMemPool_v11020 device_set_mem_pool{};
  PFN_cuStreamCreate_v2000 stream_create{};
  PFN_cuStreamCreateWithPriority_v5050 stream_create_with_priority{};
  PFN_cuStreamDestroy_v4000 stream_destroy{};
  PFN_cuStreamBeginCapture_v10010 stream_begin_capture{};
  PFN_cuStreamBeginCapture_v10010_ptsz stream_begin_capture_ptsz{};
  PFN_cuStreamEndCapture_v10000 stream_end_capture{};
  PFN_cuStreamEndCapture_v10000_ptsz stream_end_capture_ptsz{};
  PFN_cuPointerGetAttribute_v4000 pointer_get_attribute{};
  PFN_cuPointerGetAttributes_v7000 pointer_get_attributes{};
  PFN_cuMemRetainAllocationHandle_v11000 mem_retain_allocation_handle{};  // may be null: no virtual memory management
  // For CUDA IPC of served blocks (ipc_exports.hpp, ipc_imports.hpp); may be null.
  PFN_cuMemGetAllocationPropertiesFromHandle_v10020 mem_get_allocation_properties_from_handle{};
  PFN_cuMemExportToShareableHandle_v10020 mem_export_to_shareable_handle{};
  PFN_cuMemImportFromShareableHandle_v10020 mem_import_from_shareable_handle{};
  PFN_cuMemRelease_v10020 mem_release{};
  PFN_cuMemAddressReserve_v10020 mem_address_reserve{};
  PFN_cuMemAddressFree_v10020 mem_address_free{};
  PFN_cuMemMap_v10020 mem_map{};
  PFN_cuMemUnmap_v10020 mem_unmap{};
  PFN_cuMemSetAccess_v10020 mem_set_access{};
  legacy_primary_ctx_reset_fn primary_ctx_reset_v1{};  // may be null: a driver without the old ABI
  PFN_cuDevicePrimaryCtxReset_v11000 primary_ctx_reset{};

  // Used by the shim itself.
  PFN_cuCtxGetCurrent_v4000 ctx_get_current{};
  PFN_cuCtxSetCurrent_v4000 ctx_set_current{};
  PFN_cuCtxGetDevice_v2000 ctx_get_device{};
  PFN_cuCtxSynchronize_v2000 ctx_synchronize{};
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_ctx_retain{};
  PFN_cuDeviceGetCount_v2000 device_get_count{};
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute{};
  PFN_cuDeviceGetMemPool_v11020 device_get_mem_pool{};
  PFN_cuDeviceGetDefaultMemPool_v11020 device_get_default_mem_pool{};
  PFN_cuStreamIsCapturing_v10000 stream_is_capturing{};
  PFN_cuStreamQuery_v2000 stream_query{};
  PFN_cuStreamSynchronize_v2000 stream_synchronize{};
  PFN_cuStreamWaitEvent_v3020 stream_wait_event{};
  PFN_cuThreadExchangeStreamCaptureMode_v10010 exchange_capture_mode{};
  PFN_cuEventCreate_v2000 event_create{};
  PFN_cuEventRecord_v2000 event_record{};
  PFN_cuEventQuery_v2000 event_query{};
  PFN_cuEventSynchronize_v2000 event_synchronize{};
  PFN_cuEventDestroy_v4000 event_destroy{};
  PFN_cuGetErrorName_v6000 get_error_name{};

  /// The driver's entry point `name` at ABI `version` (`per_thread`: the per-thread default
  /// stream flavour), through the real resolver; null when the driver has none.
  [[nodiscard]] void* resolve(char const* name, int version, bool per_thread = false) const noexcept;
};

namespace detail {
/// Set once the driver is bound; read without a call on every hook.
inline std::atomic<real_driver const*> bound_driver{nullptr};
[[nodiscard]] real_driver const* bind_real_driver() noexcept;
}  // namespace detail

/// The real driver once the process has loaded libcuda.so.1 (bound on the first call that finds
/// it loaded); null before, or when it lacks an entry point the shim needs.
[[nodiscard]] inline real_driver const* real() noexcept
{
  if (auto const* driver = detail::bound_driver.load(std::memory_order_acquire); driver != nullptr) [[likely]] {
    return driver;
  }
  return detail::bind_real_driver();
}

/// Binds the resource library's driver table (core/src/detail/cuda_driver.hpp) to the real driver,
/// once, before the shim first uses the library: the library must never reach the driver through
/// the shim's own dlsym. Throws rmm::cuda_error when the driver lacks an entry point it needs.
void bind_library_to_real_driver();

/// The real CUDA runtime functions the runtime-level hooks pass through to, found after the shim
/// in the library search order. Null members when the process has no shared libcudart.
struct real_runtime {
  cudaError_t (*malloc)(void**, std::size_t){};
  cudaError_t (*free)(void*){};
  cudaError_t (*malloc_async)(void**, std::size_t, cudaStream_t){};
  cudaError_t (*malloc_async_ptsz)(void**, std::size_t, cudaStream_t){};
  cudaError_t (*free_async)(void*, cudaStream_t){};
  cudaError_t (*free_async_ptsz)(void*, cudaStream_t){};
};
[[nodiscard]] real_runtime const& real_cudart() noexcept;

/// Marks code that may run before a sanitizer's runtime has initialized: the runtime looks up the
/// functions it intercepts through dlsym, which is ours, so that path must not be instrumented.
#define RMM_SHIM_BEFORE_SANITIZERS __attribute__((no_sanitize("address", "undefined", "thread")))

/// The real dlsym (glibc's), found with dlvsym so that the shim's own dlsym is not asked.
/// glibc's own dlsym (not a wrapper calling it: the asm entry jumps to it, so that glibc sees the
/// caller's return address), found through dlvsym; null when no known version is there.
using dlsym_fn = void* (*)(void*, char const*);
[[nodiscard]] RMM_SHIM_BEFORE_SANITIZERS dlsym_fn find_glibc_dlsym() noexcept;

[[nodiscard]] RMM_SHIM_BEFORE_SANITIZERS void* real_dlsym(void* handle, char const* symbol) noexcept;

}  // namespace rmm::shim
