#include "real_driver.hpp"

#include "detail/cuda_driver.hpp"

#include <dlfcn.h>

#include <atomic>
#include <type_traits>
#include <mutex>

namespace rmm::shim {

RMM_SHIM_BEFORE_SANITIZERS dlsym_fn find_glibc_dlsym() noexcept
{
  // glibc 2.34 moved dlsym into libc under a new version; older programs bind the older one, and
  // 64-bit Arm starts at 2.17.
  // A plain array: nothing here may call instrumented code (an initializer_list's begin()).
  static constexpr char const* versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
  for (std::size_t i = 0; i < sizeof versions / sizeof versions[0]; ++i) {
    if (void* fn = dlvsym(RTLD_NEXT, "dlsym", versions[i]); fn != nullptr) { return reinterpret_cast<dlsym_fn>(fn); }
  }
  return nullptr;
}

namespace {

template <class Fn>
bool bind(real_driver const& driver, Fn& slot, char const* name, int version, bool per_thread = false)
{
  slot = reinterpret_cast<Fn>(driver.resolve(name, version, per_thread));
  return slot != nullptr;
}

bool bind_all(real_driver& d)
{
  // 12000 selects the current ABI of each entry point (the _v2 forms of cuMemAlloc and friends).
  bool const required =
    bind(d, d.get_proc_address, "cuGetProcAddress", 11030) && bind(d, d.mem_alloc, "cuMemAlloc", 12000) &&
    bind(d, d.mem_free, "cuMemFree", 12000) && bind(d, d.mem_alloc_async, "cuMemAllocAsync", 12000) &&
    bind(d, d.mem_alloc_async_ptsz, "cuMemAllocAsync", 12000, true) &&
    bind(d, d.mem_free_async, "cuMemFreeAsync", 12000) &&
    bind(d, d.mem_free_async_ptsz, "cuMemFreeAsync", 12000, true) && bind(d, d.mem_get_info, "cuMemGetInfo", 12000) &&
    bind(d, d.mem_get_address_range, "cuMemGetAddressRange", 12000) &&
    bind(d, d.device_set_mem_pool, "cuDeviceSetMemPool", 12000) && bind(d, d.stream_create, "cuStreamCreate", 12000) &&
    bind(d, d.stream_create_with_priority, "cuStreamCreateWithPriority", 12000) &&
    bind(d, d.stream_destroy, "cuStreamDestroy", 12000) &&
    bind(d, d.stream_begin_capture, "cuStreamBeginCapture", 12000) &&
    bind(d, d.stream_begin_capture_ptsz, "cuStreamBeginCapture", 12000, true) &&
    bind(d, d.stream_end_capture, "cuStreamEndCapture", 12000) &&
    bind(d, d.stream_end_capture_ptsz, "cuStreamEndCapture", 12000, true) &&
    bind(d, d.primary_ctx_reset, "cuDevicePrimaryCtxReset", 12000) &&
    bind(d, d.pointer_get_attribute, "cuPointerGetAttribute", 12000) &&
    bind(d, d.pointer_get_attributes, "cuPointerGetAttributes", 12000) &&
    bind(d, d.ctx_get_current, "cuCtxGetCurrent", 12000) && bind(d, d.ctx_set_current, "cuCtxSetCurrent", 12000) &&
    bind(d, d.ctx_get_device, "cuCtxGetDevice", 12000) && bind(d, d.ctx_synchronize, "cuCtxSynchronize", 12000) &&
    bind(d, d.primary_ctx_retain, "cuDevicePrimaryCtxRetain", 12000) &&
    bind(d, d.device_get_count, "cuDeviceGetCount", 12000) &&
    bind(d, d.device_get_attribute, "cuDeviceGetAttribute", 12000) &&
    bind(d, d.device_get_mem_pool, "cuDeviceGetMemPool", 12000) &&
    bind(d, d.device_get_default_mem_pool, "cuDeviceGetDefaultMemPool", 12000) &&
    bind(d, d.stream_is_capturing, "cuStreamIsCapturing", 12000) && bind(d, d.stream_query, "cuStreamQuery", 12000) &&
    bind(d, d.stream_wait_event, "cuStreamWaitEvent", 12000) &&
    bind(d, d.stream_synchronize, "cuStreamSynchronize", 12000) &&
    bind(d, d.exchange_capture_mode, "cuThreadExchangeStreamCaptureMode", 12000) &&
    bind(d, d.event_create, "cuEventCreate", 12000) && bind(d, d.event_record, "cuEventRecord", 12000) &&
    bind(d, d.event_query, "cuEventQuery", 12000) && bind(d, d.event_synchronize, "cuEventSynchronize", 12000) &&
    bind(d, d.event_destroy, "cuEventDestroy", 12000) && bind(d, d.get_error_name, "cuGetErrorName", 12000);
  // Optional: the shim only counts these, so a driver without one loses nothing else.
  (void)bind(d, d.ipc_get_mem_handle, "cuIpcGetMemHandle", 12000);
  (void)bind(d, d.mem_alloc_managed, "cuMemAllocManaged", 12000);
  (void)bind(d, d.mem_alloc_from_pool_async, "cuMemAllocFromPoolAsync", 12000);
  (void)bind(d, d.mem_alloc_from_pool_async_ptsz, "cuMemAllocFromPoolAsync", 12000, true);
  (void)bind(d, d.mem_create, "cuMemCreate", 12000);
  (void)bind(d, d.primary_ctx_reset_v1, "cuDevicePrimaryCtxReset", 7000);
  (void)bind(d, d.mem_retain_allocation_handle, "cuMemRetainAllocationHandle", 12000);
  (void)bind(d, d.ipc_open_mem_handle, "cuIpcOpenMemHandle", 12000);
  (void)bind(d, d.ipc_open_mem_handle_v1, "cuIpcOpenMemHandle", 4010);
  (void)bind(d, d.ipc_close_mem_handle, "cuIpcCloseMemHandle", 12000);
  (void)bind(d, d.mem_get_allocation_properties_from_handle, "cuMemGetAllocationPropertiesFromHandle", 12000);
  (void)bind(d, d.mem_export_to_shareable_handle, "cuMemExportToShareableHandle", 12000);
  (void)bind(d, d.mem_import_from_shareable_handle, "cuMemImportFromShareableHandle", 12000);
  (void)bind(d, d.mem_release, "cuMemRelease", 12000);
  (void)bind(d, d.mem_address_reserve, "cuMemAddressReserve", 12000);
  (void)bind(d, d.mem_address_free, "cuMemAddressFree", 12000);
  (void)bind(d, d.mem_map, "cuMemMap", 12000);
  (void)bind(d, d.mem_unmap, "cuMemUnmap", 12000);
  (void)bind(d, d.mem_set_access, "cuMemSetAccess", 12000);
  return required;
}

}  // namespace

namespace {
/// Constant-initialized and read with compiler builtins, not a function-local static or a
/// std::atomic: a sanitizer intercepts the guard of the one and instruments the calls of the
/// other, and this runs before its runtime is ready. Two threads finding it at once store the
/// same value.
dlsym_fn found_real_dlsym = nullptr;
}  // namespace

RMM_SHIM_BEFORE_SANITIZERS void* real_dlsym(void* handle, char const* symbol) noexcept
{
  auto fn = __atomic_load_n(&found_real_dlsym, __ATOMIC_ACQUIRE);
  if (fn == nullptr) {
    fn = find_glibc_dlsym();
    __atomic_store_n(&found_real_dlsym, fn, __ATOMIC_RELEASE);
  }
  return fn != nullptr ? fn(handle, symbol) : nullptr;
}

void* real_driver::resolve(char const* name, int version, bool per_thread) const noexcept
{
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  auto const flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
  if (get_proc_address_v2(name, &fn, version, flags, &status) != CUDA_SUCCESS ||
      status != CU_GET_PROC_ADDRESS_SUCCESS) {
    return nullptr;
  }
  return fn;
}

real_driver const* detail::bind_real_driver() noexcept
{
  auto& bound = bound_driver;
  static std::mutex binding;
  std::lock_guard lock{binding};
  if (auto const* driver = bound.load(std::memory_order_relaxed); driver != nullptr) { return driver; }
  // Only a driver the program loaded: the shim never brings CUDA into a process.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) { return nullptr; }
  static real_driver driver;
  driver.library = library;
  driver.get_proc_address_v2 =
    reinterpret_cast<PFN_cuGetProcAddress_v12000>(real_dlsym(library, "cuGetProcAddress_v2"));
  if (driver.get_proc_address_v2 == nullptr || !bind_all(driver)) { return nullptr; }
  bound.store(&driver, std::memory_order_release);
  return &driver;
}

void bind_library_to_real_driver()
{
  static std::once_flag once;
  std::call_once(once, [] {
    (void)rmm::detail::bind_cuda_driver([](char const* name, int version, cuuint64_t flags) -> void* {
      void* fn = nullptr;
      CUdriverProcAddressQueryResult status{};
      auto const* driver = real();
      if (driver == nullptr || driver->get_proc_address_v2(name, &fn, version, flags, &status) != CUDA_SUCCESS ||
          status != CU_GET_PROC_ADDRESS_SUCCESS) {
        return nullptr;
      }
      return fn;
    });
  });
}

real_runtime const& real_cudart() noexcept
{
  // Asked when a runtime-level hook first runs: the program called it, so its libcudart is loaded.
  static real_runtime const runtime = [] {
    real_runtime r;
    auto const find = [](auto& slot, char const* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(real_dlsym(RTLD_NEXT, name));
    };
    find(r.malloc, "cudaMalloc");
    find(r.free, "cudaFree");
    find(r.malloc_async, "cudaMallocAsync");
    find(r.malloc_async_ptsz, "cudaMallocAsync_ptsz");
    find(r.free_async, "cudaFreeAsync");
    find(r.free_async_ptsz, "cudaFreeAsync_ptsz");
    return r;
  }();
  return runtime;
}

}  // namespace rmm::shim
