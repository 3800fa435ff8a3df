// SPDX-License-Identifier: Apache-2.0
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
#include <string>

// The runtime's per-thread default stream flavours, which cuda_runtime_api.h declares only for
// builds that select them.
extern "C" cudaError_t cudaMallocAsync_ptsz(void** ptr, std::size_t bytes, cudaStream_t stream);
extern "C" cudaError_t cudaFreeAsync_ptsz(void* ptr, cudaStream_t stream);

namespace rmm::shim {

// Legacy ABIs, whose typedefs cudaTypedefs.h keeps for the driver's own build.
using legacy_ipc_open_mem_handle_fn  = CUresult (*)(CUdeviceptr* dptr, CUipcMemHandle handle, unsigned int flags);
using legacy_primary_ctx_reset_fn    = CUresult (*)(CUdevice device);
using legacy_stream_begin_capture_fn = CUresult (*)(CUstream stream);

/// Whether a wrapped entry point is the per-thread default stream flavour (_ptsz / _ptds).
enum class stream_flavour : bool { default_stream, per_thread };

/// Whether the shim can work without a driver function (entry_points.def says which).
enum class requirement : bool { required, optional };

struct real_driver {
  void* library{};  // libcuda.so.1, as the program loaded it

  // One member per driver function the shim wraps or calls, of the ABI entry_points.def names;
  // an optional one may be null.
#define RMM_SHIM_HOOK(wrapper, name, first_version, end_version, flavour, real, type, need) type real{};
#define RMM_SHIM_LEGACY_HOOK(wrapper, exported, name, first_version, end_version, flavour, real, type, need) \
  type real{};
#define RMM_SHIM_SUBMISSION(wrapper, name, first_version, end_version, flavour, real, type) type real{};
#define RMM_SHIM_LEGACY_SUBMISSION(wrapper, exported, name, first_version, end_version, flavour, real, type) \
  type real{};
#define RMM_SHIM_DRIVER_CALL(real, name, version, type, need) type real{};
#include "driver/entry_points.def"

  /// The driver's entry point `name` at ABI `version`, of the given stream flavour, through the
  /// real resolver; null when the driver has none.
  [[nodiscard]] void* resolve(char const* name,
                              int version,
                              stream_flavour flavour = stream_flavour::default_stream) const noexcept;
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

/// The driver's name for `result` (CUDA_ERROR_...), or its number where the driver has none.
[[nodiscard]] std::string driver_error_name(CUresult result);

/// Binds the resource library's driver table (core/src/detail/cuda_driver.hpp) to the real driver,
/// once, before the shim first uses the library: the library must never reach the driver through
/// the shim's own dlsym. Throws rmm::cuda_error when the driver lacks an entry point it needs.
void bind_library_to_real_driver();

/// The real CUDA runtime functions the runtime-level hooks pass through to, found after the shim
/// in the library search order, one member per runtime hook named after it. Null members when the
/// process has no shared libcudart.
struct real_runtime {
#define RMM_SHIM_RUNTIME_HOOK(wrapper) decltype(&::wrapper) wrapper{};
#include "driver/entry_points.def"
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
