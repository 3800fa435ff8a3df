// SPDX-License-Identifier: Apache-2.0
#include "detail/cuda_driver.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>

#include <string>

namespace rmm {

cuda_device_id get_current_cuda_device() { return cuda_device_id{detail::current_device()}; }

int get_num_cuda_devices()
{
  if (detail::cuda_driver_init_result() == CUDA_ERROR_NO_DEVICE) { return 0; }
  int count{};
  RMM_CU_TRY(cuDeviceGetCount(&count));
  return count;
}

std::pair<std::size_t, std::size_t> available_device_memory()
{
  std::size_t free_bytes{};
  std::size_t total_bytes{};
  detail::require_context();
  RMM_CU_TRY(cuMemGetInfo_v2(&free_bytes, &total_bytes));
  return {free_bytes, total_bytes};
}

std::size_t percent_of_free_device_memory(int percent)
{
  RMM_EXPECTS(percent >= 0 && percent <= 100,
              "percent_of_free_device_memory: percent must be between 0 and 100, got " + std::to_string(percent));
  auto const free_bytes = available_device_memory().first;
  // Integer arithmetic: a double loses precision for sizes above 2^53.
  auto const bytes =
    free_bytes / 100 * static_cast<std::size_t>(percent) + free_bytes % 100 * static_cast<std::size_t>(percent) / 100;
  return align_down(bytes, CUDA_ALLOCATION_ALIGNMENT);
}

cuda_set_device_raii::cuda_set_device_raii(cuda_device_id device)
{
  // The current context, which may be none: it is what the destructor restores.
  RMM_CU_TRY(cuCtxGetCurrent(&previous_));
  if (previous_ != nullptr) {
    CUdevice current{};
    RMM_CU_TRY(cuCtxGetDevice(&current));
    if (static_cast<int>(current) == device.value()) { return; }
  }
  RMM_CU_TRY(cuCtxSetCurrent(detail::primary_context(device.value())));
  needs_reset_ = true;
}

cuda_set_device_raii::~cuda_set_device_raii() noexcept
{
  if (needs_reset_) { RMM_CU_ASSERT_SUCCESS(cuCtxSetCurrent(previous_)); }
}

}  // namespace rmm
