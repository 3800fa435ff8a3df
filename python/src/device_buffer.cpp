// SPDX-License-Identifier: Apache-2.0
// rmm.DeviceBuffer: untyped device memory from a resource, with copies to and from the host,
// __cuda_array_interface__, and adoption of a C++ device_buffer without a copy.

#include "bindings.hpp"
#include "resource_object.hpp"
#include "stream_object.hpp"

#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/prefetch.hpp>
#include <rmm/python/device_buffer_capsule.hpp>

#include <cuda_runtime_api.h>

#include <nanobind/stl/string.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace rmm::python {
namespace {

struct device_buffer_object {
  /// `size` bytes from `resource_` on `stream`, holding a copy of `source`'s first `size` bytes
  /// unless `source` is null. Made in place: the resource is copied once, into the buffer.
  device_buffer_object(void const* source,
                       std::size_t size,
                       rmm::cuda_stream_view stream,
                       rmm::mr::any_device_resource resource_)
    : buffer{source == nullptr ? rmm::device_buffer{size, stream, resource_}
                               : rmm::device_buffer{source, size, stream, resource_}},
      resource{std::move(resource_)}
  {
  }
  device_buffer_object(rmm::device_buffer buffer_, std::optional<rmm::mr::any_device_resource> resource_)
    : buffer{std::move(buffer_)}, resource{std::move(resource_)}
  {
  }
  device_buffer_object(device_buffer_object&&) noexcept        = default;
  device_buffer_object& operator=(device_buffer_object&&)      = delete;
  device_buffer_object(device_buffer_object const&)            = delete;
  device_buffer_object& operator=(device_buffer_object const&) = delete;

  /// Frees without the GIL when Python holds it: a free may wait for the device (cudaFree does).
  ~device_buffer_object()
  {
    if (buffer.data() == nullptr || PyGILState_Check() == 0) { return; }
    nb::gil_scoped_release released;
    rmm::device_buffer{std::move(buffer)};
  }

  rmm::device_buffer buffer;
  /// The resource it was made with (absent for an adopted C++ buffer): copies come from it too.
  std::optional<rmm::mr::any_device_resource> resource;
};

/// The stream a call names, or the buffer's own when it names none.
rmm::cuda_stream_view stream_or_own(device_buffer_object const& self, nb::handle stream)
{
  return stream.is_none() ? self.buffer.stream() : stream_from(stream);
}

rmm::mr::any_device_resource resource_from(nb::handle mr)
{
  if (mr.is_none()) { return rmm::mr::get_current_device_resource(); }
  return upstream_from(mr, "mr").resource;
}

/// A contiguous host (or any) buffer-protocol view, released on scope exit. Not a buffer, or a
/// read-only one where it must be written: TypeError; a buffer laid out otherwise: ValueError.
class host_view {
 public:
  host_view(nb::handle object, bool writable, char const* what)
  {
    int const flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object.ptr(), &view_, flags) == 0) { return; }
    PyErr_Clear();
    std::string const type = nb::type_name(object.type()).c_str();
    if (PyObject_CheckBuffer(object.ptr()) == 0) {
      throw nb::type_error(
        (std::string{what} + " must be a buffer (bytes, bytearray, memoryview, a NumPy array), not " + type).c_str());
    }
    Py_buffer probe{};
    if (PyObject_GetBuffer(object.ptr(), &probe, PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      throw nb::value_error((std::string{what} + " must be C-contiguous: this " + type +
                             " has gaps or another order (copy it first, e.g. numpy.ascontiguousarray)")
                              .c_str());
    }
    PyBuffer_Release(&probe);
    throw nb::type_error((std::string{what} + " must be writable: this " + type + " is read-only").c_str());
  }
  host_view(host_view const&)            = delete;
  host_view& operator=(host_view const&) = delete;
  ~host_view() { PyBuffer_Release(&view_); }

  [[nodiscard]] void* data() const noexcept { return view_.buf; }
  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

/// Copies `bytes` between any two addresses in `stream`'s order and waits for the copy.
void copy_and_wait(void* destination, void const* source, std::size_t bytes, rmm::cuda_stream_view stream)
{
  nb::gil_scoped_release released;
  if (bytes == 0) { return; }
  RMM_CUDA_TRY(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, stream.value()));
  stream.synchronize();
}

/// Makes the buffer in `self`'s storage, without the GIL: allocation may wait for the device.
void make_buffer_in(device_buffer_object* self,
                    std::uintptr_t ptr,
                    std::size_t size,
                    nb::handle stream_arg,
                    nb::handle mr)
{
  auto const stream = stream_from(stream_arg);
  auto resource     = resource_from(mr);
  without_gil([&] {
    void const* source = size == 0 ? nullptr : pointer_from(ptr);
    new (self) device_buffer_object{source, size, stream, std::move(resource)};
    // As RMM: a copy on the default stream is complete when the constructor returns.
    if (source != nullptr && stream.is_default()) {
      try {
        stream.synchronize();
      } catch (...) {
        self->~device_buffer_object();  // Python sees no object: free it here
        throw;
      }
    }
  });
}

nb::dict cuda_array_interface(device_buffer_object const& self)
{
  nb::dict cai;
  cai["data"]    = nb::make_tuple(address_of(self.buffer.data()), false);
  cai["shape"]   = nb::make_tuple(self.buffer.size());
  cai["strides"] = nb::none();
  cai["typestr"] = "|u1";
  cai["version"] = 3;
  // The stream the data is ready on; 0 is not allowed, the legacy default stream is 1.
  auto const stream = address_of(self.buffer.stream().value());
  cai["stream"]     = stream == 0 ? std::uintptr_t{1} : stream;
  return cai;
}

/// Bytes of a CUDA array (contiguous only) described by `__cuda_array_interface__`.
std::pair<void const*, std::size_t> device_array_bytes(nb::handle array)
{
  if (!nb::hasattr(array, "__cuda_array_interface__")) {
    throw nb::type_error("copy_from_device takes an object with __cuda_array_interface__ (CuPy, Numba, DeviceBuffer)");
  }
  nb::dict const cai = nb::cast<nb::dict>(array.attr("__cuda_array_interface__"));
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    throw nb::value_error("copy_from_device needs a C-contiguous array (its strides must be None)");
  }
  auto const typestr = nb::cast<std::string>(cai["typestr"]);
  std::size_t bytes  = std::stoul(typestr.substr(2));
  for (nb::handle extent : nb::cast<nb::tuple>(cai["shape"])) {
    if (__builtin_mul_overflow(bytes, nb::cast<std::size_t>(extent), &bytes)) {
      throw nb::value_error("copy_from_device: the array's shape describes more than 2**64 bytes");
    }
  }
  // The producer's data is ready once its stream has reached it (the protocol's "stream" entry).
  if (cai.contains("stream") && !cai["stream"].is_none()) {
    auto const producer = handle_from_int(cai["stream"], "__cuda_array_interface__ stream");
    without_gil([&] { rmm::cuda_stream_view{producer}.synchronize(); });
  }
  auto const data = nb::cast<nb::tuple>(cai["data"]);
  return {pointer_from(nb::cast<std::uintptr_t>(data[0])), bytes};
}

}  // namespace

void bind_device_buffer(nb::module_& module)
{
  nb::class_<device_buffer_object>(
    module, "DeviceBuffer",
    "Untyped, uninitialized device memory from a resource (the current device resource by default).\n\n"
    "DeviceBuffer(size=n) allocates n bytes; DeviceBuffer(ptr=p, size=n) copies n bytes from address p "
    "(host or device). Allocation and free are ordered on `stream`.")
    .def(
      "__init__",
      [](device_buffer_object* self, std::uintptr_t ptr, nb::handle size, nb::handle stream, nb::handle mr) {
        make_buffer_in(self, ptr, size_from(size, "size"), stream, mr);
      },
      nb::kw_only(), nb::arg("ptr") = 0, nb::arg("size") = 0, nb::arg("stream") = nb::none(),
      nb::arg("mr") = nb::none())
    .def_static(
      "to_device",
      [](nb::handle data, nb::handle stream, nb::handle mr) {
        host_view const host{data, false, "to_device's data"};
        auto const on = stream_from(stream);
        auto resource = resource_from(mr);
        return without_gil([&] {
          void const* source = host.size() == 0 ? nullptr : host.data();
          device_buffer_object made{source, host.size(), on, std::move(resource)};
          on.synchronize();
          return made;
        });
      },
      nb::arg("data"), nb::arg("stream") = nb::none(), nb::arg("mr") = nb::none(),
      "A new DeviceBuffer holding a copy of host `data` (any contiguous buffer).")
    .def_static(
      "from_capsule",
      [](nb::capsule capsule) {
        if (PyCapsule_IsValid(capsule.ptr(), device_buffer_capsule_name) == 0) {
          throw nb::value_error(
            "from_capsule takes a capsule made by rmm::python::to_device_buffer_capsule that was not adopted before");
        }
        auto* owned = static_cast<rmm::device_buffer*>(PyCapsule_GetPointer(capsule.ptr(), device_buffer_capsule_name));
        device_buffer_object made{std::move(*owned), std::nullopt};
        // The capsule gives up the (now empty) buffer and cannot be adopted twice.
        PyCapsule_SetDestructor(capsule.ptr(), nullptr);
        delete owned;
        PyCapsule_SetName(capsule.ptr(), "rmm.device_buffer (adopted)");
        return made;
      },
      nb::arg("capsule"),
      "Takes over a C++ rmm::device_buffer handed out as a capsule (see <rmm/python/device_buffer_capsule.hpp>), "
      "without copying it.")
    .def_prop_ro(
      "ptr", [](device_buffer_object const& self) { return address_of(self.buffer.data()); }, "The device address.")
    .def_prop_ro(
      "size", [](device_buffer_object const& self) { return self.buffer.size(); }, "Bytes.")
    .def_prop_ro(
      "nbytes", [](device_buffer_object const& self) { return self.buffer.size(); }, "Bytes (same as size).")
    .def("__len__", [](device_buffer_object const& self) { return self.buffer.size(); })
    .def(
      "capacity", [](device_buffer_object const& self) { return self.buffer.capacity(); }, "Bytes allocated.")
    .def_prop_ro(
      "stream", [](device_buffer_object const& self) { return address_of(self.buffer.stream().value()); },
      "The handle of the stream its memory is ordered on.")
    .def_prop_ro("__cuda_array_interface__", &cuda_array_interface)
    .def(
      "resize",
      [](device_buffer_object& self, nb::handle new_size, nb::handle stream) {
        auto const bytes = size_from(new_size, "new_size");
        auto const on    = stream_or_own(self, stream);
        without_gil([&] { self.buffer.resize(bytes, on); });
      },
      nb::arg("new_size"), nb::arg("stream") = nb::none(),
      "Sets the size; grows the allocation (keeping the contents) only beyond the capacity.")
    .def(
      "reserve",
      [](device_buffer_object& self, nb::handle new_capacity, nb::handle stream) {
        auto const bytes = size_from(new_capacity, "new_capacity");
        auto const on    = stream_or_own(self, stream);
        without_gil([&] { self.buffer.reserve(bytes, on); });
      },
      nb::arg("new_capacity"), nb::arg("stream") = nb::none())
    .def(
      "copy",
      [](device_buffer_object const& self, nb::handle stream) {
        auto const on = stream_or_own(self, stream);
        auto resource = self.resource ? *self.resource : rmm::mr::get_current_device_resource();
        return without_gil([&] {
          device_buffer_object made{rmm::device_buffer{self.buffer, on, resource}, resource};
          on.synchronize();
          return made;
        });
      },
      nb::arg("stream") = nb::none(),
      "A deep copy, from the same resource (the current one for an adopted C++ buffer).")
    .def("__bytes__", [](nb::handle self) { return self.attr("tobytes")(); })
    // Pickled as its bytes, and unpickled into a new buffer from the current resource, as RMM's.
    // From protocol 5 the bytes are a PickleBuffer, which a pickler given a buffer_callback keeps
    // out of band (RMM's pickles a NumPy array, which does the same).
    .def("__reduce__",
         [](nb::handle self) {
           return nb::make_tuple(nb::module_::import_("rmm.pylibrmm.device_buffer").attr("to_device"),
                                 nb::make_tuple(self.attr("tobytes")()));
         })
    .def(
      "__reduce_ex__",
      [](nb::handle self, int protocol) {
        nb::object data = self.attr("tobytes")();
        if (protocol >= 5) { data = nb::module_::import_("pickle").attr("PickleBuffer")(data); }
        return nb::make_tuple(nb::module_::import_("rmm.pylibrmm.device_buffer").attr("to_device"),
                              nb::make_tuple(data));
      },
      nb::arg("protocol"))
    .def(
      "prefetch",
      [](device_buffer_object const& self, nb::handle device, nb::handle stream) {
        auto const on = stream_or_own(self, stream);
        auto const target =
          device.is_none() ? rmm::get_current_cuda_device() : rmm::cuda_device_id{nb::cast<int>(nb::int_(device))};
        without_gil([&] { rmm::prefetch(self.buffer.data(), self.buffer.size(), target, on); });
      },
      nb::arg("device") = nb::none(), nb::arg("stream") = nb::none(),
      "Migrates managed memory to `device` (the current one by default; cudaCpuDeviceId, -1, for the host) on "
      "`stream` (the buffer's by default); nothing for other memory.")
    .def("__copy__", [](nb::handle self) { return self.attr("copy")(); })
    .def("__deepcopy__", [](nb::handle self, nb::handle) { return self.attr("copy")(); })
    .def(
      "tobytes",
      [](device_buffer_object const& self, nb::handle stream) {
        auto const on    = stream_or_own(self, stream);
        nb::object bytes = nb::steal(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(self.buffer.size())));
        if (!bytes.is_valid()) { throw nb::python_error(); }
        copy_and_wait(PyBytes_AsString(bytes.ptr()), self.buffer.data(), self.buffer.size(), on);
        return bytes;
      },
      nb::arg("stream") = nb::none(), "The contents as bytes.")
    .def(
      "copy_to_host",
      [](device_buffer_object const& self, nb::object ary, nb::handle stream) {
        auto const on = stream_or_own(self, stream);
        if (ary.is_none()) { ary = nb::module_::import_("numpy").attr("empty")(self.buffer.size(), "u1"); }
        host_view const host{ary, true, "copy_to_host's ary"};
        if (host.size() < self.buffer.size()) {
          throw nb::value_error(("copy_to_host: ary holds " + std::to_string(host.size()) + " bytes, the buffer " +
                                 std::to_string(self.buffer.size()))
                                  .c_str());
        }
        copy_and_wait(host.data(), self.buffer.data(), self.buffer.size(), on);
        return ary;
      },
      nb::arg("ary") = nb::none(), nb::arg("stream") = nb::none(),
      "Copies the contents into `ary` (a new NumPy uint8 array when None) and returns it.")
    .def(
      "copy_from_host",
      [](device_buffer_object& self, nb::handle ary, nb::handle stream) {
        auto const on = stream_or_own(self, stream);
        host_view const host{ary, false, "copy_from_host's ary"};
        if (host.size() > self.buffer.size()) {
          throw nb::value_error(("copy_from_host: ary holds " + std::to_string(host.size()) +
                                 " bytes, more than the buffer's " + std::to_string(self.buffer.size()))
                                  .c_str());
        }
        copy_and_wait(self.buffer.data(), host.data(), host.size(), on);
      },
      nb::arg("ary"), nb::arg("stream") = nb::none(),
      "Copies host `ary` (at most size bytes) to the start of the buffer.")
    .def(
      "copy_from_device",
      [](device_buffer_object& self, nb::handle cuda_ary, nb::handle stream) {
        auto const on              = stream_or_own(self, stream);
        auto const [source, bytes] = device_array_bytes(cuda_ary);
        if (bytes > self.buffer.size()) {
          throw nb::value_error(("copy_from_device: the array holds " + std::to_string(bytes) +
                                 " bytes, more than the buffer's " + std::to_string(self.buffer.size()))
                                  .c_str());
        }
        copy_and_wait(self.buffer.data(), source, bytes, on);
      },
      nb::arg("cuda_ary"), nb::arg("stream") = nb::none(),
      "Copies a contiguous device array to the start of the buffer.")
    .def("__repr__",
         [](device_buffer_object const& self) {
           return "<rmm.DeviceBuffer size=" + std::to_string(self.buffer.size()) +
                  " ptr=" + std::to_string(address_of(self.buffer.data())) + ">";
         })
    // The device memory it holds, as RMM's DeviceBuffer says (Dask sizes its caches by it).
    .def("__sizeof__", [](device_buffer_object const& self) { return self.buffer.size(); });

  // RMM's module functions for copies between raw addresses (device addresses as ints), each
  // ordered on `stream` and waited for.
  module.def(
    "copy_ptr_to_host",
    [](std::uintptr_t device_source, nb::handle host_destination, nb::handle stream) {
      host_view const host{host_destination, true, "copy_ptr_to_host's host buffer"};
      copy_and_wait(host.data(), reinterpret_cast<void const*>(device_source), host.size(), stream_from(stream));
    },
    nb::arg("db"), nb::arg("hb"), nb::arg("stream") = nb::none(),
    "Copies len(hb) bytes from device address `db` into the writable host buffer `hb`.");
  module.def(
    "copy_host_to_ptr",
    [](nb::handle host_source, std::uintptr_t device_destination, nb::handle stream) {
      host_view const host{host_source, false, "copy_host_to_ptr's host buffer"};
      copy_and_wait(reinterpret_cast<void*>(device_destination), host.data(), host.size(), stream_from(stream));
    },
    nb::arg("hb"), nb::arg("db"), nb::arg("stream") = nb::none(),
    "Copies the host buffer `hb` to device address `db`.");
  module.def(
    "copy_device_to_ptr",
    [](std::uintptr_t device_source, std::uintptr_t device_destination, std::size_t count, nb::handle stream) {
      copy_and_wait(reinterpret_cast<void*>(device_destination), reinterpret_cast<void const*>(device_source), count,
                    stream_from(stream));
    },
    nb::arg("d_src"), nb::arg("d_dst"), nb::arg("count"), nb::arg("stream") = nb::none(),
    "Copies `count` bytes between device addresses.");

  // Exercises the C++ hand-over path from Python (the tests use it).
  module.def(
    "_device_buffer_capsule_for_testing",
    [](std::size_t size, std::uint8_t fill) {
      auto buffer = std::make_unique<rmm::device_buffer>(size, rmm::cuda_stream_view{});
      if (size > 0) {
        RMM_CUDA_TRY(cudaMemsetAsync(buffer->data(), fill, size, buffer->stream().value()));
        buffer->stream().synchronize();
      }
      return nb::steal(to_device_buffer_capsule(std::move(buffer)));
    },
    nb::arg("size"), nb::arg("fill"));
}

}  // namespace rmm::python
