// SPDX-License-Identifier: Apache-2.0
// rmm.mr's adaptors: each wraps an upstream resource and adds one concern (logging, statistics,
// tracking, a limit, a failure callback, prefetching, alignment, a lock).

#include "bindings.hpp"
#include "resource_object.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace rmm::python {
namespace {

namespace mr = rmm::mr;

using statistics_object  = adaptor_object<mr::statistics_resource_adaptor>;
using tracking_object    = adaptor_object<mr::tracking_resource_adaptor>;
using limiting_object    = adaptor_object<mr::limiting_resource_adaptor>;
using aligned_object     = adaptor_object<mr::aligned_resource_adaptor>;
using prefetch_object    = adaptor_object<mr::prefetch_resource_adaptor>;
using thread_safe_object = adaptor_object<mr::thread_safe_resource_adaptor>;

struct logging_object : adaptor_object<mr::logging_resource_adaptor> {
  logging_object(mr::logging_resource_adaptor adaptor, nb::object upstream_, std::string file_name_)
    : typed_resource_object{std::move(adaptor), std::move(upstream_)}, file_name{std::move(file_name_)}
  {
  }
  std::string file_name;
};

/// "log.csv" on device 1 is "log.dev1.csv": one file per device, as RMM's Python package names them.
std::string with_device_id(std::string const& file_name, rmm::cuda_device_id device)
{
  std::filesystem::path path{file_name};
  auto const extension = path.extension().string();
  path.replace_extension();
  return path.string() + ".dev" + std::to_string(device.value()) + extension;
}

/// The counters of one level as RMM's Python API spells them.
nb::dict counts(mr::statistics_resource_adaptor::counter const& bytes,
                mr::statistics_resource_adaptor::counter const& allocations)
{
  nb::dict d;
  d["current_bytes"] = bytes.value;
  d["current_count"] = allocations.value;
  d["peak_bytes"]    = bytes.peak;
  d["peak_count"]    = allocations.peak;
  d["total_bytes"]   = bytes.total;
  d["total_count"]   = allocations.total;
  return nb::cast<nb::dict>(nb::module_::import_("rmm.statistics").attr("AllocationCounts")(d));
}

void bind_observers(nb::module_& module)
{
  nb::class_<logging_object, upstream_adaptor_object>(
    module, "LoggingResourceAdaptor",
    "Writes every allocation and free to a CSV file (rmm-replay reads it). The file name (RMM_LOG_FILE by "
    "default) gets the device before its extension: log.csv on device 0 is log.dev0.csv.",
    resource_gc())
    .def(
      "__init__",
      [](logging_object* self, nb::object upstream_mr, std::optional<std::string> log_file_name) {
        auto& upstream   = upstream_from(upstream_mr, "upstream_mr");
        auto const given = log_file_name ? *log_file_name : mr::logging_resource_adaptor::default_log_file();
        if (given.find('\0') != std::string::npos) { throw nb::value_error("log_file_name contains a NUL character"); }
        auto const file = with_device_id(given, rmm::get_current_cuda_device());
        new (self) logging_object{without_gil([&] {
                                    return mr::logging_resource_adaptor{upstream.resource, file};
                                  }),
                                  std::move(upstream_mr), file};
      },
      nb::arg("upstream_mr"), nb::arg("log_file_name") = nb::none())
    .def(
      "flush", [](logging_object& self) { without_gil([&] { self.typed.flush(); }); },
      "Writes buffered lines to the file.")
    .def("get_file_name", [](logging_object const& self) { return self.file_name; });

  nb::class_<statistics_object, upstream_adaptor_object>(
    module, "StatisticsResourceAdaptor",
    "Counts bytes and allocations: current, peak and total, in a stack of levels (push_counters/pop_counters).",
    resource_gc())
    .def(
      "__init__",
      [](statistics_object* self, nb::object upstream_mr) {
        auto& upstream = upstream_from(upstream_mr, "upstream_mr");
        new (self) statistics_object{mr::statistics_resource_adaptor{upstream.resource}, std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"))
    .def_prop_ro(
      "allocation_counts",
      [](statistics_object const& self) {
        return counts(self.typed.get_bytes_counter(), self.typed.get_allocations_counter());
      },
      "current/peak/total bytes and counts of the top level.")
    .def(
      "push_counters",
      [](statistics_object& self) {
        auto const [bytes, allocations] = self.typed.push_counters();
        return counts(bytes, allocations);
      },
      "Starts a level of zeroed counters; returns the counts of the level below.")
    .def(
      "pop_counters",
      [](statistics_object& self) {
        auto const [bytes, allocations] = self.typed.pop_counters();
        return counts(bytes, allocations);
      },
      "Ends the top level (folding it into the one below) and returns its counts.");

  nb::class_<tracking_object, upstream_adaptor_object>(
    module, "TrackingResourceAdaptor", "Remembers every outstanding allocation, with its stack when asked.",
    resource_gc())
    .def(
      "__init__",
      [](tracking_object* self, nb::object upstream_mr, bool capture_stacks) {
        auto& upstream = upstream_from(upstream_mr, "upstream_mr");
        new (self)
          tracking_object{mr::tracking_resource_adaptor{upstream.resource, capture_stacks}, std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"), nb::arg("capture_stacks") = false)
    .def("get_allocated_bytes", [](tracking_object const& self) { return self.typed.get_allocated_bytes(); })
    .def("get_outstanding_allocations_str",
         [](tracking_object const& self) { return self.typed.get_outstanding_allocations_str(); })
    .def("log_outstanding_allocations", [](tracking_object const& self) { self.typed.log_outstanding_allocations(); })
    .def(
      "get_outstanding_allocations",
      [](tracking_object const& self) {
        nb::dict outstanding;
        for (auto const& [ptr, info] : self.typed.get_outstanding_allocations()) {
          outstanding[nb::int_(address_of(ptr))] = info.allocation_size;
        }
        return outstanding;
      },
      "{address: size} of every allocation not yet freed.");
}

void bind_controls(nb::module_& module)
{
  nb::class_<limiting_object, upstream_adaptor_object>(
    module, "LimitingResourceAdaptor", "Refuses allocations that would take the total above `allocation_limit`.",
    resource_gc())
    .def(
      "__init__",
      [](limiting_object* self, nb::object upstream_mr, nb::handle allocation_limit) {
        auto& upstream   = upstream_from(upstream_mr, "upstream_mr");
        auto const limit = size_from(allocation_limit, "allocation_limit");
        new (self) limiting_object{mr::limiting_resource_adaptor{upstream.resource, limit}, std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"), nb::arg("allocation_limit"))
    .def("get_allocated_bytes", [](limiting_object const& self) { return self.typed.get_allocated_bytes(); })
    .def("get_allocation_limit", [](limiting_object const& self) { return self.typed.get_allocation_limit(); });

  using failure_object = adaptor_object<mr::failure_callback_resource_adaptor<>>;
  nb::class_<failure_object, upstream_adaptor_object>(
    module, "FailureCallbackResourceAdaptor",
    "On running out of memory calls callback(nbytes): True retries the allocation, False raises MemoryError.",
    resource_gc())
    .def(
      "__init__",
      [](failure_object* self, nb::object upstream_mr, nb::handle callback) {
        auto& upstream = upstream_from(upstream_mr, "upstream_mr");
        auto held      = hold_callable(callback, "callback");
        auto* made     = new (self) failure_object{
          mr::failure_callback_resource_adaptor<>{
                upstream.resource, [held](std::size_t bytes, void*) { return held->call<bool>(bytes); }, nullptr},
          std::move(upstream_mr)};
        made->callables = {held};
      },
      nb::arg("upstream_mr"), nb::arg("callback"));

  nb::class_<prefetch_object, upstream_adaptor_object>(
    module, "PrefetchResourceAdaptor", "Prefetches each new allocation (managed memory) to the device on its stream.",
    resource_gc())
    .def(
      "__init__",
      [](prefetch_object* self, nb::object upstream_mr) {
        auto& upstream = upstream_from(upstream_mr, "upstream_mr");
        new (self) prefetch_object{mr::prefetch_resource_adaptor{upstream.resource}, std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"));

  nb::class_<aligned_object, upstream_adaptor_object>(
    module, "AlignedResourceAdaptor", "Aligns allocations of at least `alignment_threshold` bytes to `alignment`.",
    resource_gc())
    .def(
      "__init__",
      [](aligned_object* self, nb::object upstream_mr, std::size_t alignment, std::size_t alignment_threshold) {
        auto& upstream = upstream_from(upstream_mr, "upstream_mr");
        new (self) aligned_object{mr::aligned_resource_adaptor{upstream.resource, alignment, alignment_threshold},
                                  std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"), nb::arg("alignment") = rmm::CUDA_ALLOCATION_ALIGNMENT,
      nb::arg("alignment_threshold") = mr::aligned_resource_adaptor::default_alignment_threshold)
    .def_prop_ro("alignment", [](aligned_object const& self) { return self.typed.alignment(); });

  nb::class_<thread_safe_object, upstream_adaptor_object>(
    module, "ThreadSafeResourceAdaptor", "Serializes every call to the upstream with one lock.", resource_gc())
    .def(
      "__init__",
      [](thread_safe_object* self, nb::object upstream_mr) {
        auto& upstream = upstream_from(upstream_mr, "upstream_mr");
        new (self) thread_safe_object{mr::thread_safe_resource_adaptor{upstream.resource}, std::move(upstream_mr)};
      },
      nb::arg("upstream_mr"));
}

}  // namespace

void bind_adaptors(nb::module_& module)
{
  bind_observers(module);
  bind_controls(module);
}

}  // namespace rmm::python
