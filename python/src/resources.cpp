// SPDX-License-Identifier: Apache-2.0
// rmm.mr's resources that allocate: the device, managed, pinned-host and system bottoms, CUDA's
// own pool, and rmm's sub-allocators (pool, fixed size, binning, arena), plus a resource made of
// two Python functions. Each Python class keeps its upstream object for `upstream_mr`.

#include "bindings.hpp"
#include "resource_object.hpp"
#include "stream_object.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace rmm::python {
namespace {

namespace mr = rmm::mr;

using pool_object  = adaptor_object<mr::pool_memory_resource>;
using fixed_object = adaptor_object<mr::fixed_size_memory_resource>;
using arena_object = adaptor_object<mr::arena_memory_resource>;
using async_object = typed_resource_object<mr::cuda_async_memory_resource>;

/// Binning keeps the Python objects of the bins it was given, so they live as long as it does.
struct binning_object : adaptor_object<mr::binning_memory_resource> {
  using typed_resource_object::typed_resource_object;
  nb::list bin_resources;
};

std::optional<std::size_t> optional_size(nb::handle value, char const* what)
{
  if (value.is_none()) { return std::nullopt; }
  return size_from(value, what);
}

nb::dict suballocator_statistics_dict(mr::suballocator_statistics const& s)
{
  nb::dict d;
  d["reserved_bytes"]      = s.reserved_bytes;
  d["peak_reserved_bytes"] = s.peak_reserved_bytes;
  d["allocated_bytes"]     = s.allocated_bytes;
  d["free_bytes"]          = s.free_bytes;
  d["free_blocks"]         = s.free_blocks;
  d["largest_free_block"]  = s.largest_free_block;
  d["fragmentation"]       = s.fragmentation();
  d["moved_bytes"]         = s.moved_bytes;
  return d;
}

/// The garbage collector's view of a resource: its upstream and the Python functions it calls.
int traverse_resource(PyObject* self, visitproc visit, void* arg)  // the names Py_VISIT expects
{
  Py_VISIT(Py_TYPE(self));  // a heap type's instances hold their type
  if (!nb::inst_ready(self)) { return 0; }
  auto const* resource = nb::inst_ptr<resource_object>(self);
  Py_VISIT(resource->upstream.ptr());
  for (auto const& callable : resource->callables) {
    if (int const visited = callable->traverse(visit, arg); visited != 0) { return visited; }
  }
  return 0;
}

int clear_resource(PyObject* self)
{
  if (!nb::inst_ready(self)) { return 0; }
  auto* resource     = nb::inst_ptr<resource_object>(self);
  resource->upstream = nb::none();
  for (auto const& callable : resource->callables) { callable->clear(); }
  return 0;
}

PyType_Slot resource_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&traverse_resource)},
                                {Py_tp_clear, reinterpret_cast<void*>(&clear_resource)},
                                {0, nullptr}};

}  // namespace

nb::type_slots resource_gc() noexcept { return nb::type_slots(resource_slots); }

namespace {

void bind_base(nb::module_& module)
{
  nb::class_<resource_object>(module, "DeviceMemoryResource",
                              "A device memory resource: the base of every class in rmm.mr.",
                              nb::is_weak_referenceable(), resource_gc())
    .def(
      "allocate",
      [](resource_object& self, std::size_t nbytes, nb::handle stream) {
        auto const view = stream_from(stream);
        return address_of(
          without_gil([&] { return self.resource.allocate(view, nbytes, rmm::CUDA_ALLOCATION_ALIGNMENT); }));
      },
      nb::arg("nbytes"), nb::arg("stream") = nb::none(),
      "Allocates `nbytes` ordered on `stream`; returns the address as an int. MemoryError when it cannot.")
    .def(
      "deallocate",
      [](resource_object& self, std::uintptr_t ptr, std::size_t nbytes, nb::handle stream) {
        auto const view = stream_from(stream);
        without_gil([&] { self.resource.deallocate(view, pointer_from(ptr), nbytes, rmm::CUDA_ALLOCATION_ALIGNMENT); });
      },
      nb::arg("ptr"), nb::arg("nbytes"), nb::arg("stream") = nb::none(),
      "Frees what allocate returned (same size), ordered on `stream`.")
    .def_prop_ro(
      "upstream_mr", [](resource_object const& self) { return self.upstream; },
      "The resource this one allocates from (None for a bottom resource).")
    .def(
      "get_upstream", [](resource_object const& self) { return self.upstream; }, "Same as upstream_mr.");
  nb::class_<upstream_adaptor_object, resource_object>(
    module, "UpstreamResourceAdaptor",
    "The base of every resource that allocates from an upstream resource (pools and adaptors); built only "
    "through those classes.",
    resource_gc());
}

void bind_bottoms(nb::module_& module)
{
  nb::class_<typed_resource_object<mr::cuda_memory_resource>, resource_object>(
    module, "CudaMemoryResource", "cudaMalloc and cudaFree.", resource_gc())
    .def("__init__", [](typed_resource_object<mr::cuda_memory_resource>* self) {
      new (self) typed_resource_object<mr::cuda_memory_resource>{mr::cuda_memory_resource{}};
    });
  nb::class_<typed_resource_object<mr::managed_memory_resource>, resource_object>(
    module, "ManagedMemoryResource", "cudaMallocManaged: memory the host and every device can reach.", resource_gc())
    .def("__init__", [](typed_resource_object<mr::managed_memory_resource>* self) {
      new (self) typed_resource_object<mr::managed_memory_resource>{mr::managed_memory_resource{}};
    });
  nb::class_<typed_resource_object<mr::pinned_host_memory_resource>, resource_object>(
    module, "PinnedHostMemoryResource", "cudaMallocHost: page-locked host memory the device can reach.", resource_gc())
    .def("__init__", [](typed_resource_object<mr::pinned_host_memory_resource>* self) {
      new (self) typed_resource_object<mr::pinned_host_memory_resource>{mr::pinned_host_memory_resource{}};
    });
  nb::class_<typed_resource_object<mr::system_memory_resource>, resource_object>(
    module, "SystemMemoryResource",
    "The host's allocator, for devices that reach system memory (HMM or ATS); refused elsewhere.", resource_gc())
    .def("__init__", [](typed_resource_object<mr::system_memory_resource>* self) {
      new (self)
        typed_resource_object<mr::system_memory_resource>{without_gil([] { return mr::system_memory_resource{}; })};
    });
  nb::class_<typed_resource_object<mr::sam_headroom_memory_resource>, resource_object>(
    module, "SamHeadroomMemoryResource",
    "System memory placed on the device up to its free memory less `headroom` bytes, the rest on the host "
    "(HMM or ATS devices only).",
    resource_gc())
    .def(
      "__init__",
      [](typed_resource_object<mr::sam_headroom_memory_resource>* self, nb::handle headroom) {
        auto const bytes = size_from(headroom, "headroom");
        new (self) typed_resource_object<mr::sam_headroom_memory_resource>{
          without_gil([&] { return mr::sam_headroom_memory_resource{bytes}; })};
      },
      nb::arg("headroom"))
    .def_prop_ro("headroom", [](typed_resource_object<mr::sam_headroom_memory_resource> const& self) {
      return self.typed.headroom();
    });
  nb::class_<typed_resource_object<mr::cuda_async_managed_memory_resource>, resource_object>(
    module, "CudaAsyncManagedMemoryResource",
    "Stream-ordered managed memory from the current device's default managed pool (CUDA 13); experimental in "
    "RMM, reached as rmm.mr.experimental.CudaAsyncManagedMemoryResource.",
    resource_gc())
    .def("__init__",
         [](typed_resource_object<mr::cuda_async_managed_memory_resource>* self) {
           new (self) typed_resource_object<mr::cuda_async_managed_memory_resource>{
             without_gil([] { return mr::cuda_async_managed_memory_resource{}; })};
         })
    .def("pool_handle", [](typed_resource_object<mr::cuda_async_managed_memory_resource> const& self) {
      return address_of(self.typed.pool_handle());
    });
  nb::class_<async_object, resource_object>(module, "CudaAsyncMemoryResource",
                                            "cudaMallocAsync from a CUDA memory pool of its own.", resource_gc())
    .def(
      "__init__",
      [](async_object* self, nb::handle initial_pool_size, nb::handle release_threshold, bool enable_ipc,
         bool enable_fabric) {
        auto const initial   = optional_size(initial_pool_size, "initial_pool_size");
        auto const threshold = optional_size(release_threshold, "release_threshold");
        using handle_types   = mr::cuda_async_memory_resource::allocation_handle_type;
        std::optional<handle_types> handle_type;
        if (enable_ipc || enable_fabric) {
          auto const bits = (enable_ipc ? static_cast<std::int32_t>(handle_types::posix_file_descriptor) : 0) |
                            (enable_fabric ? static_cast<std::int32_t>(handle_types::fabric) : 0);
          handle_type = static_cast<handle_types>(bits);
        }
        new (self) async_object{without_gil([&] {
          return mr::cuda_async_memory_resource{initial, threshold, handle_type};
        })};
      },
      nb::arg("initial_pool_size") = nb::none(), nb::arg("release_threshold") = nb::none(),
      nb::arg("enable_ipc") = false, nb::arg("enable_fabric") = false)
    .def("pool_handle", [](async_object const& self) { return address_of(self.typed.pool_handle()); });
  nb::class_<typed_resource_object<mr::cuda_async_view_memory_resource>, resource_object>(
    module, "CudaAsyncViewMemoryResource", "cudaMallocFromPoolAsync from a CUDA memory pool the caller owns.",
    resource_gc())
    .def(
      "__init__",
      [](typed_resource_object<mr::cuda_async_view_memory_resource>* self, std::uintptr_t pool_handle) {
        new (self) typed_resource_object<mr::cuda_async_view_memory_resource>{
          mr::cuda_async_view_memory_resource{static_cast<cudaMemPool_t>(pointer_from(pool_handle))}};
      },
      nb::arg("pool_handle"));
}

void bind_suballocators(nb::module_& module)
{
  nb::class_<pool_object, upstream_adaptor_object>(
    module, "PoolMemoryResource",
    "A coalescing best-fit pool over `upstream_mr`. Sizes are ints or strings (\"1GiB\"); the initial size "
    "defaults to half the device's free memory, the maximum to no limit.",
    resource_gc())
    .def(
      "__init__",
      [](pool_object* self, nb::object upstream_mr, nb::handle initial_pool_size, nb::handle maximum_pool_size) {
        auto& upstream            = upstream_from(upstream_mr, "upstream_mr");
        auto const maximum        = optional_size(maximum_pool_size, "maximum_pool_size");
        std::size_t const initial = initial_pool_size.is_none()
                                      ? without_gil([] { return rmm::percent_of_free_device_memory(50); })
                                      : size_from(initial_pool_size, "initial_pool_size");
        new (self) pool_object{without_gil([&] {
                                 return mr::pool_memory_resource{upstream.resource, initial, maximum};
                               }),
                               std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"), nb::arg("initial_pool_size") = nb::none(), nb::arg("maximum_pool_size") = nb::none())
    .def(
      "pool_size", [](pool_object const& self) { return self.typed.pool_size(); }, "Bytes held from upstream.")
    .def(
      "release", [](pool_object& self) { return without_gil([&] { return self.typed.release(); }); },
      "Gives free upstream blocks back; returns the bytes released.")
    .def(
      "pool_statistics", [](pool_object const& self) { return suballocator_statistics_dict(self.typed.statistics()); },
      "Reserved, allocated and free bytes, free blocks and fragmentation.");

  nb::class_<fixed_object, upstream_adaptor_object>(
    module, "FixedSizeMemoryResource", "Blocks of one size, carved from `upstream_mr` in batches.", resource_gc())
    .def(
      "__init__",
      [](fixed_object* self, nb::object upstream_mr, nb::handle block_size, std::size_t blocks_to_preallocate) {
        auto& upstream   = upstream_from(upstream_mr, "upstream_mr");
        auto const bytes = size_from(block_size, "block_size");
        new (self)
          fixed_object{without_gil([&] {
                         return mr::fixed_size_memory_resource{upstream.resource, bytes, blocks_to_preallocate};
                       }),
                       std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"), nb::arg("block_size") = mr::fixed_size_memory_resource::default_block_size,
      nb::arg("blocks_to_preallocate") = mr::fixed_size_memory_resource::default_blocks_to_preallocate)
    .def("get_block_size", [](fixed_object const& self) { return self.typed.get_block_size(); });

  nb::class_<binning_object, upstream_adaptor_object>(
    module, "BinningMemoryResource",
    "Requests up to each bin's size go to that bin's resource, larger ones to `upstream_mr`. With exponents, "
    "adds fixed-size bins of 2**min_size_exponent to 2**max_size_exponent bytes.",
    resource_gc())
    .def(
      "__init__",
      [](binning_object* self, nb::object upstream_mr, int min_size_exponent, int max_size_exponent) {
        auto& upstream = upstream_from(upstream_mr, "upstream_mr");
        if ((min_size_exponent < 0) != (max_size_exponent < 0)) {
          throw nb::value_error("BinningMemoryResource: give both size exponents, or neither");
        }
        if (min_size_exponent > 62 || max_size_exponent > 62) {
          throw nb::value_error("BinningMemoryResource: size exponents must be at most 62");
        }
        new (self) binning_object{without_gil([&] {
                                    if (min_size_exponent < 0) {
                                      return mr::binning_memory_resource{upstream.resource, std::vector<std::size_t>{}};
                                    }
                                    return mr::binning_memory_resource{upstream.resource,
                                                                       static_cast<std::int8_t>(min_size_exponent),
                                                                       static_cast<std::int8_t>(max_size_exponent)};
                                  }),
                                  std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"), nb::arg("min_size_exponent") = -1, nb::arg("max_size_exponent") = -1)
    .def(
      "add_bin",
      [](binning_object& self, nb::handle allocation_size, nb::object bin_resource) {
        auto const bytes = size_from(allocation_size, "allocation_size");
        if (bin_resource.is_none()) {
          without_gil([&] { self.typed.add_bin(bytes); });
          return;
        }
        auto const bin = upstream_from(bin_resource, "bin_resource").resource;
        without_gil([&] { self.typed.add_bin(bytes, bin); });
        self.bin_resources.append(bin_resource);
      },
      nb::arg("allocation_size"), nb::arg("bin_resource") = nb::none(),
      "Adds a bin for requests up to `allocation_size`, served by `bin_resource` (a fixed-size resource "
      "over the upstream when None).")
    .def_prop_ro(
      "bin_mrs", [](binning_object const& self) { return self.bin_resources; }, "The resources given to add_bin.")
    .def_prop_ro("bin_sizes", [](binning_object const& self) { return self.typed.bin_sizes(); });

  nb::class_<arena_object, upstream_adaptor_object>(
    module, "ArenaMemoryResource", "Per-thread arenas over one global arena, for many threads on the default stream.",
    resource_gc())
    .def(
      "__init__",
      [](arena_object* self, nb::object upstream_mr, nb::handle arena_size, bool dump_log_on_failure) {
        auto& upstream   = upstream_from(upstream_mr, "upstream_mr");
        auto const bytes = optional_size(arena_size, "arena_size");
        new (self) arena_object{without_gil([&] {
                                  return mr::arena_memory_resource{upstream.resource, bytes, dump_log_on_failure};
                                }),
                                std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"), nb::arg("arena_size") = nb::none(), nb::arg("dump_log_on_failure") = false);
}

void bind_callback(nb::module_& module)
{
  using callback_object = typed_resource_object<mr::callback_memory_resource>;
  nb::class_<callback_object, resource_object>(
    module, "CallbackMemoryResource",
    "Allocates through Python functions: allocate_func(nbytes, stream) -> int address and "
    "deallocate_func(ptr, nbytes, stream).",
    resource_gc())
    .def(
      "__init__",
      [](callback_object* self, nb::handle allocate_func, nb::handle deallocate_func) {
        auto allocate   = hold_callable(allocate_func, "allocate_func");
        auto deallocate = hold_callable(deallocate_func, "deallocate_func");
        mr::callback_memory_resource resource{
          [allocate](std::size_t bytes, rmm::cuda_stream_view stream, void*) {
            stream_object on;
            on.handle = stream.value();
            try {
              return pointer_from(allocate->call<std::uintptr_t>(bytes, std::move(on)));
            } catch (nb::python_error& e) {
              // Out of memory in Python is out of memory to the layers above, which act on it (a
              // FailureCallbackResourceAdaptor calls its callback); it reaches Python again as MemoryError.
              nb::gil_scoped_acquire held;
              if (e.matches(PyExc_MemoryError)) {
                throw rmm::out_of_memory{std::string{"CallbackMemoryResource allocate_func: "} +
                                         nb::str(e.value()).c_str()};
              }
              // As RMM's: any other exception reaches the caller as RuntimeError with its message
              // (the original is its __cause__); interrupts and exits stay what they are.
              if (e.matches(PyExc_RuntimeError) || e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) {
                throw;
              }
              nb::raise_from(e, PyExc_RuntimeError, "%s", nb::str(e.value()).c_str());
            }
          },
          [deallocate](void* ptr, std::size_t bytes, rmm::cuda_stream_view stream, void*) {
            stream_object on;
            on.handle = stream.value();
            try {
              deallocate->call<void>(address_of(ptr), bytes, std::move(on));
            } catch (nb::python_error& e) {  // a free cannot fail: report it as Python does in __del__
              nb::gil_scoped_acquire held;
              e.discard_as_unraisable("rmm.mr.CallbackMemoryResource deallocate_func");
            }
          }};
        auto* made      = new (self) callback_object{std::move(resource)};
        made->callables = {allocate, deallocate};
      },
      nb::arg("allocate_func"), nb::arg("deallocate_func"));
}

}  // namespace

void bind_resources(nb::module_& module)
{
  bind_base(module);
  bind_bottoms(module);
  bind_suballocators(module);
  bind_callback(module);
}

}  // namespace rmm::python
