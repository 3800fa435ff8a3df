#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>

#include <string>

namespace rmm {

cuda_device_id get_current_cuda_device()
{
  int device{};
  RMM_CUDA_TRY(cudaGetDevice(&device));
  return cuda_device_id{device};
}

int get_num_cuda_devices()
{
  int count{};
  auto const status = cudaGetDeviceCount(&count);
  if (status == cudaSuccess) { return count; }
  (void)cudaGetLastError();
  if (status == cudaErrorNoDevice) { return 0; }
  throw rmm::cuda_error{detail::cuda_error_message(status, "cudaGetDeviceCount", __FILE__, __LINE__)};
}

std::pair<std::size_t, std::size_t> available_device_memory()
{
  std::size_t free_bytes{};
  std::size_t total_bytes{};
  RMM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  return {free_bytes, total_bytes};
}

std::size_t percent_of_free_device_memory(int percent)
{
  RMM_EXPECTS(percent >= 0 && percent <= 100,
              "percent_of_free_device_memory: percent must be between 0 and 100, got " + std::to_string(percent));
  auto const free_bytes = available_device_memory().first;
  // Integer arithmetic: a double loses precision for sizes above 2^53.
  auto const bytes = free_bytes / 100 * static_cast<std::size_t>(percent) +
                     free_bytes % 100 * static_cast<std::size_t>(percent) / 100;
  return align_down(bytes, CUDA_ALLOCATION_ALIGNMENT);
}

cuda_set_device_raii::cuda_set_device_raii(cuda_device_id device)
  : previous_{get_current_cuda_device()}, needs_reset_{previous_ != device}
{
  if (needs_reset_) { RMM_CUDA_TRY(cudaSetDevice(device.value())); }
}

cuda_set_device_raii::~cuda_set_device_raii() noexcept
{
  if (needs_reset_) { RMM_ASSERT_CUDA_SUCCESS(cudaSetDevice(previous_.value())); }
}

}  // namespace rmm
