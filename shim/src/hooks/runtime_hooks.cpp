// SPDX-License-Identifier: Apache-2.0
// The runtime-level wrappers, for programs that link the shared CUDA runtime (PyTorch,
// `nvcc -cudart shared`): serving cudaMalloc here saves the runtime's own work. A call passed
// through goes to the real runtime, whose driver calls then reach the driver-level wrappers with the
// shim out of the way (dispatch.hpp: pass_through), so no allocation is served twice.

#include "serving/dispatch.hpp"
#include "driver/real_driver.hpp"
#include "settings.hpp"
#include "visibility.hpp"

#include <cuda_runtime_api.h>

namespace {

using rmm::shim::pass_through;
constexpr auto default_stream = rmm::shim::stream_flavour::default_stream;
constexpr auto per_thread     = rmm::shim::stream_flavour::per_thread;

cudaError_t to_runtime(CUresult result) noexcept
{
  switch (result) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
    default: return cudaErrorUnknown;
  }
}

/// The runtime initialises itself (and its context) at its first call; when a program's first call
/// is one the shim serves, let the runtime do that first, as it would have. Once a thread has seen
/// a current context it is not asked again: a program that later leaves its thread without one gets
/// its allocation passed through (not a primary context), and the runtime sets one up as usual.
/// After a device reset the thread's context is the destroyed one until the runtime's next call
/// brings it back (a cudaMalloc right after cudaDeviceReset): the runtime is let start again.
void let_the_runtime_start(rmm::shim::real_runtime const& runtime)
{
  constexpr unsigned never         = ~0U;
  thread_local unsigned started_at = never;  // device_resets() when this thread's runtime last started
  auto const resets                = rmm::shim::device_resets();
  if (started_at == resets) [[likely]] { return; }
  if (!rmm::shim::settings().enabled || rmm::shim::passing_through() || runtime.cudaFree == nullptr) { return; }
  auto const start = [&] { (void)pass_through([&] { return runtime.cudaFree(nullptr); }); };
  if (started_at != never) {  // a reset since: the thread's context is the destroyed one
    start();
    started_at = resets;
    return;
  }
  CUcontext context{};
  auto const* driver = rmm::shim::real();
  if (driver == nullptr || driver->ctx_get_current(&context) != CUDA_SUCCESS || context == nullptr) {
    start();  // asked again at the next call, which finds the context the runtime made
    return;
  }
  started_at = resets;
}

/// Memory no device has: asking the real runtime for it fails with out-of-memory.
constexpr std::size_t impossible_size = std::size_t{1} << 60;

/// What a served allocation returns to the program. A failure is also made the runtime's last
/// error, as a native one is (programs and frameworks check cudaGetLastError after a failed
/// cudaMalloc): `fail_in_runtime` asks the real function for impossible_size, which records it.
template <class FailInRuntime>
cudaError_t answer(CUresult served, FailInRuntime&& fail_in_runtime)
{
  auto const error = to_runtime(served);
  if (error == cudaErrorMemoryAllocation) { (void)pass_through(fail_in_runtime); }
  return error;
}

CUdeviceptr* as_device_pointer(void** ptr) noexcept { return reinterpret_cast<CUdeviceptr*>(ptr); }

CUdeviceptr as_device_pointer(void* ptr) noexcept { return reinterpret_cast<CUdeviceptr>(ptr); }

}  // namespace

RMM_SHIM_EXPORT cudaError_t cudaMalloc(void** ptr, std::size_t bytes)
{
  auto const& runtime = rmm::shim::real_cudart();
  let_the_runtime_start(runtime);
  if (auto served = rmm::shim::serve_allocation(as_device_pointer(ptr), bytes)) {
    return answer(*served, [&] {
      void* unused = nullptr;
      return runtime.cudaMalloc(&unused, impossible_size);
    });
  }
  return pass_through([&] { return runtime.cudaMalloc(ptr, bytes); });
}

RMM_SHIM_EXPORT cudaError_t cudaFree(void* ptr)
{
  // The runtime's free reaches the driver-level wrapper: in a pass-through scope, as below.
  if (rmm::shim::foreign_free(as_device_pointer(ptr))) {
    return pass_through([&] { return rmm::shim::real_cudart().cudaFree(ptr); });
  }
  if (auto served = rmm::shim::serve_free(as_device_pointer(ptr))) { return to_runtime(*served); }
  return pass_through([&] { return rmm::shim::real_cudart().cudaFree(ptr); });
}

RMM_SHIM_EXPORT cudaError_t cudaMallocAsync(void** ptr, std::size_t bytes, cudaStream_t stream)
{
  auto const& runtime = rmm::shim::real_cudart();
  let_the_runtime_start(runtime);
  if (auto served = rmm::shim::serve_async_allocation(as_device_pointer(ptr), bytes, stream, default_stream)) {
    return answer(*served, [&] {
      void* unused = nullptr;
      return runtime.cudaMallocAsync(&unused, impossible_size, stream);
    });
  }
  return pass_through([&] { return runtime.cudaMallocAsync(ptr, bytes, stream); });
}

RMM_SHIM_EXPORT cudaError_t cudaMallocAsync_ptsz(void** ptr, std::size_t bytes, cudaStream_t stream)
{
  auto const& runtime = rmm::shim::real_cudart();
  let_the_runtime_start(runtime);
  if (auto served = rmm::shim::serve_async_allocation(as_device_pointer(ptr), bytes, stream, per_thread)) {
    return answer(*served, [&] {
      void* unused = nullptr;
      return runtime.cudaMallocAsync_ptsz(&unused, impossible_size, stream);
    });
  }
  return pass_through([&] { return runtime.cudaMallocAsync_ptsz(ptr, bytes, stream); });
}

RMM_SHIM_EXPORT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream)
{
  if (auto served = rmm::shim::serve_async_free(as_device_pointer(ptr), stream, default_stream)) {
    return to_runtime(*served);
  }
  return pass_through([&] { return rmm::shim::real_cudart().cudaFreeAsync(ptr, stream); });
}

RMM_SHIM_EXPORT cudaError_t cudaFreeAsync_ptsz(void* ptr, cudaStream_t stream)
{
  if (auto served = rmm::shim::serve_async_free(as_device_pointer(ptr), stream, per_thread)) {
    return to_runtime(*served);
  }
  return pass_through([&] { return rmm::shim::real_cudart().cudaFreeAsync_ptsz(ptr, stream); });
}
