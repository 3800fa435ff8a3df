// SPDX-License-Identifier: Apache-2.0
// The CUDA runtime calls behind rmm._cuda.gpu (RMM's helpers, which RAPIDS code imports): each
// returns the runtime's status beside its value, and the Python module raises CUDARuntimeError.

#include "bindings.hpp"

#include <cuda_runtime_api.h>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <string>
#include <utility>

namespace rmm::python {

namespace {

/// The status as an int, after clearing it from the runtime's last error (as a caller that checks
/// every status expects: a failure here must not surface in a later, unrelated cudaGetLastError).
int status_of(cudaError_t status) noexcept
{
  if (status != cudaSuccess) { (void)cudaGetLastError(); }
  return static_cast<int>(status);
}

}  // namespace

void bind_cuda_gpu(nb::module_& module)
{
  module.def("_cuda_error_name",
             [](int status) { return std::string{cudaGetErrorName(static_cast<cudaError_t>(status))}; });
  module.def("_cuda_error_string",
             [](int status) { return std::string{cudaGetErrorString(static_cast<cudaError_t>(status))}; });
  module.def("_cuda_driver_get_version", [] {
    int version{};
    return std::pair{status_of(cudaDriverGetVersion(&version)), version};
  });
  module.def("_cuda_runtime_get_version", [] {
    int version{};
    return std::pair{status_of(cudaRuntimeGetVersion(&version)), version};
  });
  module.def("_cuda_get_device", [] {
    int device{};
    return std::pair{status_of(cudaGetDevice(&device)), device};
  });
  module.def("_cuda_set_device", [](int device) { return status_of(cudaSetDevice(device)); });
  module.def("_cuda_get_device_count", [] {
    int count{};
    return std::pair{status_of(cudaGetDeviceCount(&count)), count};
  });
  module.def("_cuda_get_device_attribute", [](int attribute, int device) {
    int value{};
    return std::pair{status_of(cudaDeviceGetAttribute(&value, static_cast<cudaDeviceAttr>(attribute), device)), value};
  });
  module.def("_cuda_device_get_name", [](int device) {
    cudaDeviceProp properties{};
    auto const status = status_of(cudaGetDeviceProperties(&properties, device));
    return std::pair{status, status == 0 ? std::string{properties.name} : std::string{}};
  });
}

}  // namespace rmm::python
