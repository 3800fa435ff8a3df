// SPDX-License-Identifier: Apache-2.0
// rmm._rmm.Stream: rmm's own streams and the default streams, and other libraries' streams
// (CuPy, Numba, cuda-python) through the `__cuda_stream__` protocol or their handle attribute.

#include "stream_object.hpp"

#include <rmm/cuda_stream_pool.hpp>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <utility>

namespace rmm::python {

cudaStream_t handle_from_int(nb::handle value, char const* what)
{
  auto const raw = PyLong_AsUnsignedLongLong(value.ptr());
  if (raw == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw nb::value_error(
      (std::string{what} + " handle must be a non-negative integer, not " + nb::repr(value).c_str()).c_str());
  }
  return static_cast<cudaStream_t>(pointer_from(static_cast<std::uintptr_t>(raw)));
}

cudaStream_t handle_from_protocol(nb::handle value)
{
  nb::object const reported = value.attr("__cuda_stream__")();
  if (!nb::isinstance<nb::tuple>(reported) || nb::len(reported) != 2) {
    throw nb::type_error(
      (std::string{"__cuda_stream__() must return a (version, handle) pair, not "} + nb::repr(reported).c_str())
        .c_str());
  }
  // Version 0 is the protocol as CUDA Python defines it; a later one may mean something else by
  // the second element, which must not be taken for a handle.
  auto const pair    = nb::borrow<nb::tuple>(reported);
  auto const version = PyLong_AsLong(pair[0].ptr());
  if (PyErr_Occurred() != nullptr) {
    PyErr_Clear();
    throw nb::value_error((std::string{"__cuda_stream__() reports protocol version "} + nb::repr(pair[0]).c_str() +
                           ", which is no integer; rmm understands version 0")
                            .c_str());
  }
  if (version != 0) {  // NotImplementedError naming the version, as RMM's
    PyErr_SetString(PyExc_NotImplementedError, ("rmm does not support the CUDA stream protocol version: '" +
                                                std::to_string(version) + "' (__cuda_stream__()); it understands 0")
                                                 .c_str());
    throw nb::python_error();
  }
  return handle_from_int(pair[1], "__cuda_stream__()");
}

namespace {

/// The handle of a foreign stream object: `__cuda_stream__`, CuPy's `ptr`, Numba's `handle`.
cudaStream_t handle_of_foreign(nb::handle value)
{
  if (nb::hasattr(value, "__cuda_stream__")) { return handle_from_protocol(value); }
  if (nb::hasattr(value, "ptr") && PyLong_Check(value.attr("ptr").ptr())) {
    return handle_from_int(value.attr("ptr"), "ptr");
  }
  if (nb::hasattr(value, "handle")) {  // Numba: a ctypes c_void_p or a cuda-python CUstream
    nb::object handle = value.attr("handle");
    if (nb::hasattr(handle, "value")) { handle = handle.attr("value"); }
    if (handle.is_none()) { return cudaStream_t{}; }  // ctypes' NULL: the default stream
    return handle_from_int(nb::int_(handle), "handle");
  }
  throw nb::type_error((std::string{"Stream() takes None (a new stream), an rmm Stream, or a stream object with "
                                    "__cuda_stream__, `ptr` (CuPy) or `handle` (Numba), not "} +
                        nb::type_name(value.type()).c_str())
                         .c_str());
}

/// CudaStreamFlags (an int): SYNC_DEFAULT (0) or NON_BLOCKING (1).
rmm::cuda_stream::flags stream_flags_from(nb::handle flags)
{
  auto const value = nb::cast<long>(nb::int_(flags));
  if (value == static_cast<long>(rmm::cuda_stream::flags::sync_default)) {
    return rmm::cuda_stream::flags::sync_default;
  }
  if (value == static_cast<long>(rmm::cuda_stream::flags::non_blocking)) {
    return rmm::cuda_stream::flags::non_blocking;
  }
  throw nb::value_error(
    ("stream flags must be CudaStreamFlags.SYNC_DEFAULT (0) or NON_BLOCKING (1), not " + std::to_string(value))
      .c_str());
}

}  // namespace

void bind_streams(nb::module_& module)
{
  nb::class_<stream_object>(module, "Stream",
                            "A CUDA stream: one rmm creates (Stream()), or another library's (Stream(cupy_stream)).")
    .def(
      "__init__",
      [](stream_object* self, nb::handle source, nb::handle flags) {
        if (!flags.is_none() && !source.is_none()) {
          throw nb::value_error(
            "flags may only be specified when obj is None: they apply to a stream rmm creates, not to an existing "
            "stream");
        }
        auto const stream_flags = flags.is_none() ? rmm::cuda_stream::flags::sync_default : stream_flags_from(flags);
        auto* made              = new (self) stream_object{};
        if (source.is_none()) {
          made->owned.emplace(stream_flags);
          made->handle = made->owned->value();
        } else if (nb::isinstance<stream_object>(source)) {
          auto const& other = nb::cast<stream_object const&>(source);
          made->handle      = other.handle;
          made->source      = nb::borrow(source);
        } else {
          made->handle = handle_of_foreign(source);
          made->source = nb::borrow(source);
        }
      },
      nb::arg("obj") = nb::none(), nb::arg("flags") = nb::none())
    .def_static(
      "_from_handle",
      [](nb::handle value) {
        stream_object stream;
        stream.handle = handle_from_int(value, "stream");
        return stream;
      },
      nb::arg("handle"))
    .def_prop_ro(
      "value", [](stream_object const& self) { return address_of(self.handle); }, "The cudaStream_t as an int.")
    .def(
      "__cuda_stream__",
      [](stream_object const& self) {
        return std::pair{0, address_of(self.handle)};
      },  // NOLINT
      "The stream protocol: (version 0, handle).")
    .def(
      "synchronize", [](stream_object const& self) { self.view().synchronize(); },
      nb::call_guard<nb::gil_scoped_release>(), "Waits until the stream's work has finished.")
    .def(
      "is_default", [](stream_object const& self) { return self.view().is_default(); },
      "Whether this is the default stream (legacy or per-thread) of the device.")
    .def("__eq__",
         [](stream_object const& self, nb::handle other) {
           return nb::isinstance<stream_object>(other) && nb::cast<stream_object const&>(other).handle == self.handle;
         })
    .def("__hash__", [](stream_object const& self) { return std::hash<void*>{}(self.handle); })
    .def("__repr__", [](stream_object const& self) {
      return "Stream(" + std::to_string(address_of(self.handle)) + (self.owned ? ", owned)" : ")");
    });

  nb::class_<rmm::cuda_stream_pool>(module, "CudaStreamPool", "A fixed set of streams handed out round-robin.")
    .def(
      "__init__",
      [](rmm::cuda_stream_pool* self, std::size_t pool_size, nb::handle flags) {
        if (pool_size == 0) { throw nb::value_error("CudaStreamPool: pool_size must be at least 1"); }
        new (self) rmm::cuda_stream_pool{pool_size, stream_flags_from(flags)};
      },
      nb::arg("pool_size") = rmm::cuda_stream_pool::default_size, nb::arg("flags") = 0)
    .def(
      "get_stream",
      [](nb::handle self, nb::handle stream_id) {
        auto const& pool = nb::cast<rmm::cuda_stream_pool const&>(self);
        stream_object stream;
        stream.handle =
          (stream_id.is_none() ? pool.get_stream() : pool.get_stream(nb::cast<std::size_t>(stream_id))).value();
        stream.source = nb::borrow(self);  // the pool owns the stream: kept alive with it
        return stream;
      },
      nb::arg("stream_id") = nb::none(),
      "The next stream, round-robin; with `stream_id`, the one at that id modulo the pool size.")
    .def("get_pool_size", &rmm::cuda_stream_pool::get_pool_size, "How many streams the pool holds.");

  // What the driver says of a stream's flags (the tests use it).
  module.def("_stream_flags_for_testing", [](nb::handle stream) {
    unsigned flags{};
    RMM_CUDA_TRY(cudaStreamGetFlags(stream_from(stream).value(), &flags));
    return flags;
  });
}

}  // namespace rmm::python
