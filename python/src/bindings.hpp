// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the binding sources share: the Python object behind every memory resource, and the
// conversions of the arguments every binding takes (sizes, streams, devices).

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/resource_ref.hpp>

#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace rmm::python {

namespace nb = nanobind;

/**
 * The C++ side of rmm.mr.DeviceMemoryResource: an owning handle to the resource (copies of rmm
 * resources share their state, so the handle alone keeps the whole stack alive), and the Python
 * object of its upstream, kept for `upstream_mr`.
 */
class python_callable;

struct resource_object {
  resource_object(rmm::mr::any_device_resource resource_, nb::object upstream_ = nb::none())
    : resource{std::move(resource_)}, upstream{std::move(upstream_)}
  {
  }
  virtual ~resource_object() = default;

  rmm::mr::any_device_resource resource;
  nb::object upstream;
  /// The Python functions the C++ resource calls (a callback resource's, a failure callback):
  /// shown to the garbage collector, with `upstream`, so that a cycle through them is freed.
  std::vector<std::shared_ptr<python_callable>> callables;
};

/// rmm.mr.UpstreamResourceAdaptor: the base of every class that allocates from an upstream
/// resource (pools and adaptors), so that code can tell them from bottom resources.
struct upstream_adaptor_object : resource_object {
  using resource_object::resource_object;
};

/// A resource object that also keeps the typed resource, for the methods only its type has.
template <class Resource, class Base = resource_object>
struct typed_resource_object : Base {
  typed_resource_object(Resource typed_, nb::object upstream_ = nb::none())
    : Base{typed_, std::move(upstream_)}, typed{std::move(typed_)}
  {
  }
  Resource typed;
};

/// The Python object of a resource with an upstream.
template <class Resource>
using adaptor_object = typed_resource_object<Resource, upstream_adaptor_object>;

/// A pointer or handle as the int Python code sees.
[[nodiscard]] inline std::uintptr_t address_of(void const* ptr) noexcept
{
  return reinterpret_cast<std::uintptr_t>(ptr);  // NOLINT: Python holds addresses as ints
}

/// The pointer an int from Python names.
[[nodiscard]] inline void* pointer_from(std::uintptr_t address) noexcept
{
  return reinterpret_cast<void*>(address);  // NOLINT: Python holds addresses as ints
}

/// A byte count from a Python int or a size string such as "1GiB" (rmm::parse_bytes).
[[nodiscard]] std::size_t size_from(nb::handle value, char const* what);

/**
 * A stream from None (the default stream), an rmm Stream, an object with `__cuda_stream__`
 * (CuPy, Numba, cuda-python), or an integer handle.
 */
[[nodiscard]] rmm::cuda_stream_view stream_from(nb::handle value);

/// The upstream argument of an adaptor: a DeviceMemoryResource, else TypeError naming `what`.
[[nodiscard]] resource_object& upstream_from(nb::handle value, char const* what);

/// The garbage collector's slots of every resource class (each class names them: nanobind's
/// subclasses do not inherit a base's traversal).
[[nodiscard]] nb::type_slots resource_gc() noexcept;

/// Module parts, each defined in its own source.
void bind_errors(nb::module_& module);
void bind_streams(nb::module_& module);
void bind_resources(nb::module_& module);
void bind_adaptors(nb::module_& module);
void bind_device_buffer(nb::module_& module);
void bind_per_device(nb::module_& module);
void bind_cuda_gpu(nb::module_& module);

}  // namespace rmm::python
