#pragma once

// The CUDA driver's virtual memory management entry points, obtained through the runtime
// (cudaGetDriverEntryPointByVersion): librmm does not link libcuda.

#include <cuda.h>

#include <string>

namespace rmm::mr::detail {

struct vmm_driver {
  decltype(&::cuMemAddressReserve) address_reserve;
  decltype(&::cuMemAddressFree) address_free;
  decltype(&::cuMemCreate) create;
  decltype(&::cuMemRelease) release;
  decltype(&::cuMemMap) map;
  decltype(&::cuMemUnmap) unmap;
  decltype(&::cuMemSetAccess) set_access;
  decltype(&::cuMemGetAllocationGranularity) granularity;
  decltype(&::cuGetErrorName) error_name;
  decltype(&::cuDeviceGet) device_get;
  decltype(&::cuDeviceGetAttribute) device_attribute;
};

/// The entry points, or nullptr when the driver does not provide them all. Loaded once.
[[nodiscard]] vmm_driver const* vmm_driver_entry_points() noexcept;

/// "cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY"
[[nodiscard]] std::string describe(vmm_driver const& driver, char const* call, CUresult result);

}  // namespace rmm::mr::detail
