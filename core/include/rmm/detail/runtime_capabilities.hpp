// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the driver, the runtime and the current device can do, asked at run time: code built
// against a newer CUDA may run on an older driver or another device. Each answer is cached on
// first use (a process does not change drivers), for the device current then.

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

namespace rmm::detail {

/// The driver and runtime version from which stream-ordered managed memory pools exist.
inline constexpr int min_async_managed_alloc_cuda_version = 13000;
/// The driver version from which memory pools can be made for hardware decompression.
inline constexpr int min_hwdecompress_cuda_version = 12080;

/// Whether `attribute` of the current device is 1 (false when the query fails).
[[nodiscard]] inline bool current_device_has(cudaDeviceAttr attribute)
{
  int value{};
  return cudaDeviceGetAttribute(&value, attribute, get_current_cuda_device().value()) == cudaSuccess && value == 1;
}

/// Stream-ordered allocation (cudaMallocAsync and memory pools).
struct runtime_async_alloc {
  /// @return true when the current device supports memory pools
  [[nodiscard]] static bool is_supported()
  {
    static bool const supported = current_device_has(cudaDevAttrMemoryPoolsSupported);
    return supported;
  }
};

/// Concurrent access to managed memory from host and device, which prefetching needs.
struct concurrent_managed_access {
  /// @return true when the current device has it
  [[nodiscard]] static bool is_supported()
  {
    static bool const supported = current_device_has(cudaDevAttrConcurrentManagedAccess);
    return supported;
  }
};

/// Exporting a memory pool's allocations with a given handle type.
struct export_handle_type {
  /**
   * @param handle_type the handle type to export with (cudaMemHandleTypeNone: always supported)
   * @return true when the current device's pools support every bit of it
   * @throws rmm::cuda_error when the query fails for another reason than an old runtime
   */
  [[nodiscard]] static bool is_supported(cudaMemAllocationHandleType handle_type)
  {
    if (handle_type == cudaMemHandleTypeNone) { return true; }
    int supported{};
    auto const status =
      cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolSupportedHandleTypes, get_current_cuda_device().value());
    if (status == cudaErrorInvalidValue) {  // a runtime too old to know the attribute
      (void)cudaGetLastError();
      return false;
    }
    RMM_CUDA_TRY(status);
    return (static_cast<unsigned>(supported) & static_cast<unsigned>(handle_type)) ==
           static_cast<unsigned>(handle_type);
  }
};

/// Memory pools for hardware decompression (cudaMemPoolCreateUsageHwDecompress).
struct hwdecompress {
  /// @return true when the driver is recent enough
  [[nodiscard]] static bool is_supported()
  {
    static bool const supported = [] {
      int driver{};
      return cudaDriverGetVersion(&driver) == cudaSuccess && driver >= min_hwdecompress_cuda_version;
    }();
    return supported;
  }
};

/// Stream-ordered managed memory pools.
struct runtime_async_managed_alloc {
  /// @return true when the device has concurrent managed access and driver and runtime are recent enough
  [[nodiscard]] static bool is_supported()
  {
    static bool const supported = [] {
      int driver{};
      int runtime{};
      return concurrent_managed_access::is_supported() && cudaDriverGetVersion(&driver) == cudaSuccess &&
             cudaRuntimeGetVersion(&runtime) == cudaSuccess && driver >= min_async_managed_alloc_cuda_version &&
             runtime >= min_async_managed_alloc_cuda_version;
    }();
    return supported;
  }
};

/// A device that shares its memory with the host (an integrated GPU).
struct device_integrated_memory {
  /// @return true when the current device is integrated
  [[nodiscard]] static bool is_supported()
  {
    static bool const integrated = current_device_has(cudaDevAttrIntegrated);
    return integrated;
  }
};

}  // namespace rmm::detail
