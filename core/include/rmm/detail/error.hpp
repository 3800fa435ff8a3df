// SPDX-License-Identifier: Apache-2.0
#pragma once

// The error macros. Included by <rmm/error.hpp>; include that instead.

#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <type_traits>

namespace rmm::detail {

/// "CUDA error at: file:line: cudaErrorX (description) in `expression`", as RMM words it.
[[nodiscard]] std::string cuda_error_message(cudaError_t error, char const* expression, char const* file, int line);

/// Message for a failed allocation of `bytes`, naming the error and the current device's free memory.
[[nodiscard]] std::string allocation_failure_message(cudaError_t error, std::size_t bytes, char const* what);

/// Throws rmm::out_of_memory for cudaErrorMemoryAllocation, rmm::bad_alloc otherwise, with
/// allocation_failure_message(error, bytes, what). Clears the runtime's sticky error first.
[[noreturn]] void throw_allocation_failure(cudaError_t error, std::size_t bytes, char const* what);

/// Checks the status of a CUDA allocation call made by the resource described by `what`.
inline void check_allocation(cudaError_t status, std::size_t bytes, char const* what)
{
  if (status != cudaSuccess) [[unlikely]] { throw_allocation_failure(status, bytes, what); }
}

/// Reports a failed CUDA call where no exception can be thrown (destructors, deallocate). Clears the
/// error, stays silent while the CUDA runtime unloads at process exit, logs everything else.
void report_cuda_error_noexcept(cudaError_t error, char const* expression, char const* file, int line) noexcept;

/// Throws `Exception` with "RMM failure at: FILE:LINE: reason", as RMM words its failures.
template <typename Exception>
[[noreturn]] void throw_with_location(std::string const& reason, char const* file, int line)
{
  static_assert(std::is_base_of_v<std::exception, Exception>, "rmm can only throw std::exception types");
  throw Exception{std::string{"RMM failure at: "} + file + ":" + std::to_string(line) + ": " + reason};
}

}  // namespace rmm::detail

// Overload macros on their argument count.
#define RMM_DETAIL_SELECT_1_OR_2(_1, _2, NAME, ...) NAME
#define RMM_DETAIL_SELECT_2_OR_3(_1, _2, _3, NAME, ...) NAME

/// RMM_EXPECTS(condition, reason[, exception_type = rmm::logic_error])
#define RMM_EXPECTS(...) RMM_DETAIL_SELECT_2_OR_3(__VA_ARGS__, RMM_DETAIL_EXPECTS_3, RMM_DETAIL_EXPECTS_2)(__VA_ARGS__)
#define RMM_DETAIL_EXPECTS_2(_condition, _reason) RMM_DETAIL_EXPECTS_3(_condition, _reason, ::rmm::logic_error)
#define RMM_DETAIL_EXPECTS_3(_condition, _reason, _exception_type)                                   \
  do {                                                                                               \
    if (!(_condition)) [[unlikely]] {                                                                \
      ::rmm::detail::throw_with_location<_exception_type>(std::string{_reason}, __FILE__, __LINE__); \
    }                                                                                                \
  } while (0)

/// RMM_FAIL(reason[, exception_type = rmm::logic_error])
#define RMM_FAIL(...) RMM_DETAIL_SELECT_1_OR_2(__VA_ARGS__, RMM_DETAIL_FAIL_2, RMM_DETAIL_FAIL_1)(__VA_ARGS__)
#define RMM_DETAIL_FAIL_1(_reason) RMM_DETAIL_FAIL_2(_reason, ::rmm::logic_error)
#define RMM_DETAIL_FAIL_2(_reason, _exception_type) \
  ::rmm::detail::throw_with_location<_exception_type>(std::string{_reason}, __FILE__, __LINE__)

/// RMM_CUDA_TRY(call[, exception_type = rmm::cuda_error]): throws when `call` does not return
/// cudaSuccess, after clearing the runtime's sticky last error.
#define RMM_CUDA_TRY(...) \
  RMM_DETAIL_SELECT_1_OR_2(__VA_ARGS__, RMM_DETAIL_CUDA_TRY_2, RMM_DETAIL_CUDA_TRY_1)(__VA_ARGS__)
#define RMM_DETAIL_CUDA_TRY_1(_call) RMM_DETAIL_CUDA_TRY_2(_call, ::rmm::cuda_error)
#define RMM_DETAIL_CUDA_TRY_2(_call, _exception_type)                                                    \
  do {                                                                                                   \
    cudaError_t const rmm_status_ = (_call);                                                             \
    if (rmm_status_ != cudaSuccess) [[unlikely]] {                                                       \
      (void)cudaGetLastError();                                                                          \
      throw _exception_type{::rmm::detail::cuda_error_message(rmm_status_, #_call, __FILE__, __LINE__)}; \
    }                                                                                                    \
  } while (0)

/// RMM_CUDA_TRY_ALLOC(call[, num_bytes]): for allocation calls. Throws rmm::out_of_memory when the
/// call reports cudaErrorMemoryAllocation and rmm::bad_alloc for any other error.
#define RMM_CUDA_TRY_ALLOC(...) \
  RMM_DETAIL_SELECT_1_OR_2(__VA_ARGS__, RMM_DETAIL_CUDA_TRY_ALLOC_2, RMM_DETAIL_CUDA_TRY_ALLOC_1)(__VA_ARGS__)
// Without a size the message starts "CUDA error at:", with one "CUDA error (failed to allocate N
// bytes) at:", as RMM's do.
#define RMM_DETAIL_CUDA_TRY_ALLOC_1(_call) \
  RMM_DETAIL_CUDA_TRY_ALLOC_WITH(_call, std::size_t{0}, std::string{"CUDA error at: "})
#define RMM_DETAIL_CUDA_TRY_ALLOC_2(_call, _num_bytes) \
  RMM_DETAIL_CUDA_TRY_ALLOC_WITH(_call, _num_bytes,    \
                                 "CUDA error (failed to allocate " + std::to_string(_num_bytes) + " bytes) at: ")
#define RMM_DETAIL_CUDA_TRY_ALLOC_WITH(_call, _num_bytes, _marker)                                      \
  do {                                                                                                  \
    cudaError_t const rmm_status_ = (_call);                                                            \
    if (rmm_status_ != cudaSuccess) [[unlikely]] {                                                      \
      (void)cudaGetLastError();                                                                         \
      auto rmm_message_ = (_marker) + __FILE__ ":" + std::to_string(__LINE__) + ": " +                  \
                          ::rmm::detail::allocation_failure_message(rmm_status_, (_num_bytes), #_call); \
      if (rmm_status_ == cudaErrorMemoryAllocation) { throw ::rmm::out_of_memory{rmm_message_}; }       \
      throw ::rmm::bad_alloc{rmm_message_};                                                             \
    }                                                                                                   \
  } while (0)

/// For noexcept paths: checks `call` and reports a failure through the debug log instead of
/// throwing (silently while the CUDA runtime unloads at exit).
#define RMM_ASSERT_CUDA_SUCCESS(_call)                                                    \
  do {                                                                                    \
    cudaError_t const rmm_status_ = (_call);                                              \
    if (rmm_status_ != cudaSuccess) [[unlikely]] {                                        \
      ::rmm::detail::report_cuda_error_noexcept(rmm_status_, #_call, __FILE__, __LINE__); \
    }                                                                                     \
  } while (0)

/// RMM_ASSERT_CUDA_SUCCESS for destructors that may run while the process exits: the runtime's
/// cudaErrorCudartUnloading is expected then and not reported (RMM_ASSERT_CUDA_SUCCESS already
/// stays silent for it; this name says so where it matters).
#define RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(_call) RMM_ASSERT_CUDA_SUCCESS(_call)
