// SPDX-License-Identifier: Apache-2.0
// The allocate/free pair PyTorch's CUDAPluggableAllocator loads from this library
// (rmm.allocators.torch): each call goes to the per-device resource of the device PyTorch names.
// No Python is involved, so PyTorch may call from any thread.

#include <rmm/cuda_device.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/per_device_resource.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <exception>

extern "C" {

// PyTorch's signatures: void* alloc(size_t, int device, cudaStream_t); void free(void*, size_t,
// int device, cudaStream_t). A failed allocation returns null; PyTorch then raises its
// out-of-memory error, and the reason is in rmm's debug log.
__attribute__((visibility("default"))) void* rmm_torch_allocate(std::size_t size,
                                                                int device,
                                                                cudaStream_t stream) noexcept
{
  try {
    // An owning copy: the resource stays alive through the call even if Python replaces it meanwhile.
    return rmm::mr::get_per_device_resource_ref(rmm::cuda_device_id{device})
      .allocate(stream, size, rmm::CUDA_ALLOCATION_ALIGNMENT);
  } catch (std::exception const& e) {
    RMM_LOG_ERROR("rmm_torch_allocate({} bytes, device {}): {}", size, device, e.what());
    return nullptr;
  }
}

__attribute__((visibility("default"))) void rmm_torch_deallocate(void* ptr,
                                                                 std::size_t size,
                                                                 int device,
                                                                 cudaStream_t stream) noexcept
{
  try {
    rmm::mr::get_per_device_resource_ref(rmm::cuda_device_id{device})
      .deallocate(stream, ptr, size, rmm::CUDA_ALLOCATION_ALIGNMENT);
  } catch (std::exception const& e) {  // only the table lookup can throw (a device that does not exist)
    RMM_LOG_ERROR("rmm_torch_deallocate({} bytes, device {}): {}", size, device, e.what());
  }
}

}  // extern "C"
