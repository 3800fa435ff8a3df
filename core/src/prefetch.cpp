// SPDX-License-Identifier: Apache-2.0
#include "detail/cuda_driver.hpp"

#include <rmm/detail/error.hpp>
#include <rmm/prefetch.hpp>

namespace rmm {

namespace {
constexpr int cpu_device = -1;  // cudaCpuDeviceId
}  // namespace

void prefetch(void const* ptr, std::size_t size, cuda_device_id device, cuda_stream_view stream)
{
  if (ptr == nullptr || size == 0) { return; }
  auto const& cu      = detail::cuda_driver_table();
  auto const address  = reinterpret_cast<CUdeviceptr>(ptr);
  unsigned is_managed = 0;
  // Memory the driver does not know (a host pointer) is not managed either.
  if (cu.cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, address) != CUDA_SUCCESS ||
      is_managed == 0) {
    return;
  }
  bool const to_host = device.value() == cpu_device;
  // Whether managed memory can move ahead of use: asked of the target, or for the host of the
  // device whose context is current.
  CUdevice handle{};
  int concurrent = 0;
  RMM_CU_TRY(cuDeviceGet(&handle, to_host ? detail::current_device() : device.value()));
  RMM_CU_TRY(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, handle));
  if (concurrent == 0) { return; }
  CUmemLocation const location{to_host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE,
                               to_host ? 0 : device.value()};
  RMM_CU_TRY(cuMemPrefetchAsync_v2(address, size, location, 0, stream.value()));
}

}  // namespace rmm
