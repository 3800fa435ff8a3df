// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one way core's allocation path reaches CUDA: a table of CUDA *driver* entry points, bound
// once. Nothing on the allocation path calls the CUDA runtime (cuda*), so a program embedding
// these objects needs only libcuda.so.1 at run time: no libcudart, and never a second one next to
// the runtime a process already carries (tests/seam checks this).
//
// Binding: on first use the table dlopens libcuda.so.1, takes cuGetProcAddress_v2 from it with
// dlsym and resolves every entry by base name at the ABI version its PFN type names (flags
// CU_GET_PROC_ADDRESS_DEFAULT: core passes explicit stream handles, CU_STREAM_LEGACY or
// CU_STREAM_PER_THREAD, and never depends on per-thread compilation), then calls cuInit(0). An
// embedder may bind it with its own resolver first (bind_cuda_driver). Either way it is bound
// once for the life of the process and never unbound.
//
// Internal to core: not installed, no API promise.

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <string>

// Every entry point of the table: X(member, base name, ABI version). The member has the name a C
// program calls (cuMemAlloc_v2 is cuMemAlloc of 3020) and the type PFN_<base>_v<version>.
#define RMM_CUDA_DRIVER_ENTRIES(X)                            \
  /* initialisation and errors */                             \
  X(cuInit, cuInit, 2000)                                     \
  X(cuGetErrorName, cuGetErrorName, 6000)                     \
  X(cuGetErrorString, cuGetErrorString, 6000)                 \
  X(cuDriverGetVersion, cuDriverGetVersion, 2020)             \
  /* devices and contexts */                                  \
  X(cuDeviceGet, cuDeviceGet, 2000)                           \
  X(cuDeviceGetCount, cuDeviceGetCount, 2000)                 \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000)         \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000) \
  X(cuCtxGetCurrent, cuCtxGetCurrent, 4000)                   \
  X(cuCtxSetCurrent, cuCtxSetCurrent, 4000)                   \
  X(cuCtxGetDevice, cuCtxGetDevice, 2000)                     \
  X(cuCtxSynchronize, cuCtxSynchronize, 2000)                 \
  /* memory */                                                \
  X(cuMemAlloc_v2, cuMemAlloc, 3020)                          \
  X(cuMemFree_v2, cuMemFree, 3020)                            \
  X(cuMemAllocManaged, cuMemAllocManaged, 6000)               \
  X(cuMemAllocHost_v2, cuMemAllocHost, 3020)                  \
  X(cuMemFreeHost, cuMemFreeHost, 2000)                       \
  X(cuMemGetInfo_v2, cuMemGetInfo, 3020)                      \
  X(cuMemPrefetchAsync_v2, cuMemPrefetchAsync, 12020)         \
  X(cuPointerGetAttribute, cuPointerGetAttribute, 4000)       \
  X(cuMemcpyDtoH_v2, cuMemcpyDtoH, 3020)                      \
  X(cuMemcpyHtoD_v2, cuMemcpyHtoD, 3020)                      \
  X(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync, 3020)            \
  X(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync, 3020)            \
  /* stream-ordered allocation */                             \
  X(cuMemPoolCreate, cuMemPoolCreate, 11020)                  \
  X(cuMemPoolDestroy, cuMemPoolDestroy, 11020)                \
  X(cuMemPoolSetAttribute, cuMemPoolSetAttribute, 11020)      \
  X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 11020)  \
  X(cuMemFreeAsync, cuMemFreeAsync, 11020)                    \
  /* events and streams */                                    \
  X(cuEventCreate, cuEventCreate, 2000)                       \
  X(cuEventRecord, cuEventRecord, 2000)                       \
  X(cuEventQuery, cuEventQuery, 2000)                         \
  X(cuEventSynchronize, cuEventSynchronize, 2000)             \
  X(cuEventDestroy_v2, cuEventDestroy, 4000)                  \
  X(cuStreamCreate, cuStreamCreate, 2000)                     \
  X(cuStreamDestroy_v2, cuStreamDestroy, 4000)                \
  X(cuStreamWaitEvent, cuStreamWaitEvent, 3020)               \
  X(cuStreamSynchronize, cuStreamSynchronize, 2000)           \
  X(cuStreamQuery, cuStreamQuery, 2000)                       \
  X(cuStreamGetId, cuStreamGetId, 12000)                      \
  X(cuStreamIsCapturing, cuStreamIsCapturing, 10000)          \
  /* virtual memory management */                             \
  X(cuMemAddressReserve, cuMemAddressReserve, 10020)          \
  X(cuMemAddressFree, cuMemAddressFree, 10020)                \
  X(cuMemCreate, cuMemCreate, 10020)                          \
  X(cuMemRelease, cuMemRelease, 10020)                        \
  X(cuMemMap, cuMemMap, 10020)                                \
  X(cuMemUnmap, cuMemUnmap, 10020)                            \
  X(cuMemSetAccess, cuMemSetAccess, 10020)                    \
  X(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity, 10020)

// Entry points only some resources use, from newer drivers: null when the driver lacks them, and
// the resource that needs one refuses to be built, saying which driver it needs.
#define RMM_CUDA_DRIVER_OPTIONAL_ENTRIES(X)                \
  X(cuMemGetDefaultMemPool, cuMemGetDefaultMemPool, 13000) \
  X(cuMemAdvise_v2, cuMemAdvise, 12020)

namespace rmm::detail {

/// The driver entry points core's allocation path uses.
struct cuda_driver {
#define RMM_DETAIL_CUDA_DRIVER_MEMBER(member, base, version) PFN_##base##_v##version member{};
  RMM_CUDA_DRIVER_ENTRIES(RMM_DETAIL_CUDA_DRIVER_MEMBER)
  RMM_CUDA_DRIVER_OPTIONAL_ENTRIES(RMM_DETAIL_CUDA_DRIVER_MEMBER)
#undef RMM_DETAIL_CUDA_DRIVER_MEMBER
};

/// Looks up one driver entry point: base name ("cuMemAlloc"), the CUDA version whose ABI is wanted
/// (3020) and cuGetProcAddress flags. Returns its address, or null when there is none.
using cuda_driver_resolver = void* (*)(char const* name, int cuda_version, cuuint64_t flags);

/// The table, bound on first use (thread-safe, once): dlopen("libcuda.so.1"), cuGetProcAddress_v2,
/// every entry, cuInit(0). Throws rmm::cuda_error naming what is missing when the driver library
/// or an entry point is (nothing is bound then; the next call tries again), and with cuInit(0)'s
/// answer when that failed (bound, and sticky: every later call throws it too, as the runtime's
/// initialisation error is).
[[nodiscard]] cuda_driver const& cuda_driver_table();

/// The same where nothing may throw: null (the failure reported) when the table cannot be bound.
[[nodiscard]] cuda_driver const* cuda_driver_table_noexcept() noexcept;

/// Binds the table with `resolver` instead of dlopen + dlsym; for a program that embeds core. An
/// embedder that interposes dlsym (a preload shim) must not let core look the driver up through
/// its own hooks, and may already hold the driver's resolver: it binds the table with that before
/// core's first CUDA call. Returns false, and changes nothing, when the table is bound already.
/// Throws rmm::cuda_error when the resolver lacks an entry point (nothing is bound then). cuInit's
/// failure does not throw here: it is reported by the calls that need the driver.
bool bind_cuda_driver(cuda_driver_resolver resolver);

/// cuInit(0)'s answer, binding the table first if needed (throws as cuda_driver_table() does for
/// a missing driver or entry point). CUDA_ERROR_NO_DEVICE: the driver works, there is no device.
[[nodiscard]] CUresult cuda_driver_init_result();

// ---- contexts ---------------------------------------------------------------------------------

/// `device`'s primary context, retained once per device for the life of the process (cached,
/// never released, as the runtime holds it). Throws rmm::cuda_error.
[[nodiscard]] CUcontext primary_context(int device);

/// Makes sure the calling thread has a current context, as the runtime's lazy initialisation does
/// before a call on the current device or a default stream: when none is current, device 0's
/// primary context becomes current. Cheap when one is (one cuCtxGetCurrent). Throws rmm::cuda_error.
void require_context();

/// The same where nothing may throw: false (the failure reported) when no context could be made
/// current; the call that needed it then fails and is reported too.
bool require_context_noexcept() noexcept;

/// The device of the calling thread's current context, after require_context().
[[nodiscard]] int current_device();

// ---- errors -----------------------------------------------------------------------------------

/// "CUDA_ERROR_INVALID_VALUE (1): invalid argument"
[[nodiscard]] std::string describe_cu_result(CUresult result);

/// "cuMemAlloc_v2(&ptr, bytes) failed: CUDA_ERROR_INVALID_VALUE (1): invalid argument (at file:line)"
[[nodiscard]] std::string cu_error_message(CUresult result, char const* expression, char const* file, int line);

[[noreturn]] void throw_cu_error(CUresult result, char const* expression, char const* file, int line);

/// Throws rmm::out_of_memory for CUDA_ERROR_OUT_OF_MEMORY, rmm::bad_alloc otherwise: "<what> could
/// not allocate <bytes>: <expression> failed: <error>; device N has F free of T".
[[noreturn]] void throw_cu_allocation_failure(CUresult result,
                                              std::size_t bytes,
                                              char const* what,
                                              char const* expression);

/// Reports a failed driver call where nothing can be thrown (destructors, deallocate) through the
/// debug log; silent for the errors of a driver that is shutting down at process exit.
void report_cu_error_noexcept(CUresult result, char const* expression, char const* file, int line) noexcept;

}  // namespace rmm::detail

// The call goes through the table: RMM_CU_TRY(cuMemFree_v2(ptr)) calls cuda_driver_table().cuMemFree_v2.

/// Throws rmm::cuda_error when the driver call does not return CUDA_SUCCESS.
#define RMM_CU_TRY(_call)                                                        \
  do {                                                                           \
    CUresult const rmm_cu_status_ = ::rmm::detail::cuda_driver_table()._call;    \
    if (rmm_cu_status_ != CUDA_SUCCESS) [[unlikely]] {                           \
      ::rmm::detail::throw_cu_error(rmm_cu_status_, #_call, __FILE__, __LINE__); \
    }                                                                            \
  } while (0)

/// For allocation calls: rmm::out_of_memory for CUDA_ERROR_OUT_OF_MEMORY, rmm::bad_alloc otherwise,
/// naming `_what` (the resource), the size and the free memory of the current device.
#define RMM_CU_TRY_ALLOC(_call, _bytes, _what)                                               \
  do {                                                                                       \
    CUresult const rmm_cu_status_ = ::rmm::detail::cuda_driver_table()._call;                \
    if (rmm_cu_status_ != CUDA_SUCCESS) [[unlikely]] {                                       \
      ::rmm::detail::throw_cu_allocation_failure(rmm_cu_status_, (_bytes), (_what), #_call); \
    }                                                                                        \
  } while (0)

/// For noexcept paths: reports a failure through the debug log instead of throwing.
#define RMM_CU_ASSERT_SUCCESS(_call)                                                                                \
  do {                                                                                                              \
    auto const* const rmm_cu_table_ = ::rmm::detail::cuda_driver_table_noexcept();                                  \
    CUresult const rmm_cu_status_   = rmm_cu_table_ != nullptr ? rmm_cu_table_->_call : CUDA_ERROR_NOT_INITIALIZED; \
    if (rmm_cu_status_ != CUDA_SUCCESS) [[unlikely]] {                                                              \
      ::rmm::detail::report_cu_error_noexcept(rmm_cu_status_, #_call, __FILE__, __LINE__);                          \
    }                                                                                                               \
  } while (0)
