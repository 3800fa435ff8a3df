// SPDX-License-Identifier: Apache-2.0
#include <rmm/detail/error.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/logger.hpp>

#include <fmt/format.h>

// The runtime's side of the error macros (RMM_CUDA_TRY and friends, for users' runtime calls and
// rmm's containers and streams). The allocation path does not use these: its CUDA calls go through
// the driver table and its errors through detail/cuda_driver.hpp.

namespace rmm::detail {

std::string cuda_error_message(cudaError_t error, char const* expression, char const* file, int line)
{
  return fmt::format("CUDA error at: {}:{}: {} ({}) in `{}`", file, line, cudaGetErrorName(error),
                     cudaGetErrorString(error), expression);
}

std::string allocation_failure_message(cudaError_t error, std::size_t bytes, char const* what)
{
  auto message = fmt::format("{} could not allocate {}: {} ({})", what, format_bytes_exact(bytes),
                             cudaGetErrorName(error), cudaGetErrorString(error));
  int device   = -1;
  std::size_t free_bytes{};
  std::size_t total_bytes{};
  // Best effort: the figures help, but a failure here must not mask the original error.
  if (cudaGetDevice(&device) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    message +=
      fmt::format("; device {} has {} free of {}", device, format_bytes(free_bytes), format_bytes(total_bytes));
  }
  (void)cudaGetLastError();
  return message;
}

void throw_allocation_failure(cudaError_t error, std::size_t bytes, char const* what)
{
  (void)cudaGetLastError();
  auto message = "CUDA error (failed to allocate " + std::to_string(bytes) +
                 " bytes): " + allocation_failure_message(error, bytes, what);
  if (error == cudaErrorMemoryAllocation) { throw rmm::out_of_memory{message}; }
  throw rmm::bad_alloc{message};
}

void report_cuda_error_noexcept(cudaError_t error, char const* expression, char const* file, int line) noexcept
{
  (void)cudaGetLastError();
  // During process exit the runtime refuses every call; the driver reclaims the memory anyway.
  if (error == cudaErrorCudartUnloading) { return; }
  try {
    default_logger().error("{}", cuda_error_message(error, expression, file, line));
  } catch (...) {  // formatting failed (out of memory): nothing more can be done without throwing
  }
}

}  // namespace rmm::detail
