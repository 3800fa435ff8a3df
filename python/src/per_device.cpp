// SPDX-License-Identifier: Apache-2.0
// The per-device resource table, devices, and stacks built from the TOML configuration (the same
// rmm::config library rmm-run and the shim use).

#include "bindings.hpp"
#include "resource_object.hpp"

#include <rmm/config/build.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

namespace rmm::python {

void bind_per_device(nb::module_& module)
{
  module.def(
    "_set_per_device_resource",
    [](int device, nb::handle mr) {
      auto const resource = upstream_from(mr, "mr").resource;
      (void)rmm::mr::set_per_device_resource(rmm::cuda_device_id{device}, resource);
    },
    nb::arg("device"), nb::arg("mr"));
  module.def(
    "_get_per_device_resource",
    [](int device) { return resource_object{rmm::mr::get_per_device_resource(rmm::cuda_device_id{device})}; },
    nb::arg("device"), "The C++ table's resource for `device`, as a plain DeviceMemoryResource.");
  module.def(
    "_is_per_device_resource",
    [](int device, nb::handle mr) {
      return upstream_from(mr, "mr").resource == rmm::mr::get_per_device_resource(rmm::cuda_device_id{device});
    },
    nb::arg("device"), nb::arg("mr"));

  module.def(
    "get_current_device", [] { return rmm::get_current_cuda_device().value(); }, "The calling thread's device.");
  module.def(
    "set_current_device", [](int device) { RMM_CUDA_TRY(cudaSetDevice(device)); }, nb::arg("device"),
    "Makes `device` current for the calling thread.");
  module.def(
    "get_num_devices", [] { return rmm::get_num_cuda_devices(); }, "How many devices are visible.");
  module.def(
    "available_device_memory", [] { return without_gil([] { return rmm::available_device_memory(); }); },
    "(free, total) bytes of the current device.");
  module.def(
    "percent_of_free_device_memory",
    [](int percent) {
      if (percent < 0 || percent > 100) { throw nb::value_error("percent must be from 0 to 100"); }
      return rmm::percent_of_free_device_memory(percent);
    },
    nb::arg("percent"));

  module.def(
    "_build_from_config",
    [](std::optional<std::string> path, std::optional<std::string> toml, int device) {
      rmm::cuda_device_id const id{device};
      return resource_object{without_gil([&] {
        if (path) { return rmm::config::build_from_file(*path, id); }
        if (toml) { return rmm::config::build_from_string(*toml, id); }
        return rmm::config::build_from_environment(id);
      })};
    },
    nb::arg("path").none(), nb::arg("toml").none(), nb::arg("device"));
}

}  // namespace rmm::python
