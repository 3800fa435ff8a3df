// SPDX-License-Identifier: Apache-2.0
// rmm._rmm: the extension behind the `rmm` package. Each part of the module is bound in its own
// source; this one holds the conversions they share, byte sizes and the debug logger's level.

#include "bindings.hpp"
#include "stream_object.hpp"

#include <rmm/format_bytes.hpp>
#include <rmm/logger.hpp>
#include <rmm/parse_bytes.hpp>

#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>

namespace rmm::python {

std::size_t size_from(nb::handle value, char const* what)
{
  if (PyLong_Check(value.ptr())) {
    auto const bytes = PyLong_AsUnsignedLongLong(value.ptr());
    if (bytes == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
      throw nb::value_error(
        (std::string{what} + " must be a byte count from 0 to 2**64 - 1, not " + nb::repr(value).c_str()).c_str());
    }
    return static_cast<std::size_t>(bytes);
  }
  if (PyUnicode_Check(value.ptr())) {
    auto const text   = nb::cast<std::string>(value);
    auto const parsed = rmm::parse_bytes(text);
    if (auto const* problem = std::get_if<rmm::bytes_problem>(&parsed)) {
      throw nb::value_error(
        (std::string{what} + " \"" + text + "\" is not a byte size: expected " + problem->expected).c_str());
    }
    return static_cast<std::size_t>(std::get<std::uint64_t>(parsed));
  }
  throw nb::type_error((std::string{what} + " must be an int or a size string such as \"1GiB\", not " +
                        nb::type_name(value.type()).c_str())
                         .c_str());
}

rmm::cuda_stream_view stream_from(nb::handle value)
{
  if (value.is_none()) { return rmm::cuda_stream_view{}; }
  if (nb::isinstance<stream_object>(value)) { return nb::cast<stream_object const&>(value).view(); }
  if (PyLong_Check(value.ptr())) { return rmm::cuda_stream_view{handle_from_int(value, "stream")}; }
  if (nb::hasattr(value, "__cuda_stream__")) { return rmm::cuda_stream_view{handle_from_protocol(value)}; }
  throw nb::type_error((std::string{"stream must be an rmm Stream, an object with __cuda_stream__ (CuPy, Numba), "
                                    "an integer handle or None, not "} +
                        nb::type_name(value.type()).c_str())
                         .c_str());
}

resource_object& upstream_from(nb::handle value, char const* what)
{
  if (!nb::isinstance<resource_object>(value)) {
    throw nb::type_error(
      (std::string{what} + " must be an rmm.mr.DeviceMemoryResource, not " + nb::type_name(value.type()).c_str())
        .c_str());
  }
  return nb::cast<resource_object&>(value);
}

namespace {

/// The level `value` is: an rmm.level_enum, or one of its names in lower case as the seeds' README
/// writes them ("trace"). Anything else is a TypeError, as RMM's functions take only the enum.
rmm::level_enum level_argument(nb::handle value, char const* function)
{
  if (nb::isinstance<rmm::level_enum>(value)) { return nb::cast<rmm::level_enum>(value); }
  if (nb::isinstance<nb::str>(value)) {
    auto const name  = nb::cast<std::string>(value);
    auto const level = rmm::level_from_string(name);
    bool const lower = std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    if (level && lower) { return *level; }
    throw nb::type_error((std::string{function} + ": '" + name +
                          "' is not a level: pass an rmm.level_enum, or one of trace, debug, info, warn, error, "
                          "critical, off")
                           .c_str());
  }
  throw nb::type_error(
    (std::string{function} + ": a level is an rmm.level_enum, not " + nb::type_name(value.type()).c_str()).c_str());
}

void bind_sizes_and_logging(nb::module_& module)
{
  module.def(
    "parse_bytes", [](nb::handle value) { return size_from(value, "size"); }, nb::arg("size"),
    "Bytes of an int or a size string (\"512MiB\", \"1.5GiB\"; binary units only).");
  module.def(
    "format_bytes", [](std::size_t bytes) { return rmm::format_bytes(bytes); }, nb::arg("nbytes"),
    "A byte count as people read it (\"1.50 GiB\").");

  nb::enum_<rmm::level_enum>(module, "level_enum", "Levels of the debug logger (RMM_DEBUG_LOG_LEVEL).")
    .value("trace", rmm::level_enum::trace)
    .value("debug", rmm::level_enum::debug)
    .value("info", rmm::level_enum::info)
    .value("warn", rmm::level_enum::warn)
    .value("error", rmm::level_enum::error)
    .value("critical", rmm::level_enum::critical)
    .value("off", rmm::level_enum::off);
  module.def(
    "set_logging_level",
    [](nb::handle level) { rmm::default_logger().set_level(level_argument(level, "set_logging_level")); },
    nb::arg("level").none(),
    "Sets the level below which the debug logger drops messages: an rmm.level_enum, or its name (\"trace\").");
  module.def(
    "get_logging_level", [] { return rmm::default_logger().level(); }, "The debug logger's level.");
  module.def(
    "set_flush_level",
    [](nb::handle level) { rmm::default_logger().flush_on(level_argument(level, "set_flush_level")); },
    nb::arg("level").none(), "Messages at `level` and above are flushed as they are written.");
  module.def(
    "get_flush_level", [] { return rmm::default_logger().flush_level(); }, "The lowest level flushed at once.");
  module.def(
    "flush_logger", [] { rmm::default_logger().flush(); }, "Writes out what the debug logger holds.");
  module.def(
    "should_log",
    [](nb::handle level) { return rmm::default_logger().should_log(level_argument(level, "should_log")); },
    nb::arg("level").none(), "Whether a message of `level` would be written.");
}

}  // namespace
}  // namespace rmm::python

NB_MODULE(_rmm, module)
{
  using namespace rmm::python;
  module.doc() = "The C++ library under the rmm package: resources, DeviceBuffer, streams.";
  bind_errors(module);
  bind_sizes_and_logging(module);
  bind_streams(module);
  bind_resources(module);
  bind_adaptors(module);
  bind_device_buffer(module);
  bind_per_device(module);
  bind_cuda_gpu(module);
  module.attr("_git_commit") = RMM_GIT_COMMIT;
}
