// SPDX-License-Identifier: Apache-2.0
#pragma once

// The driver entry points the shim wraps: one row per ABI and stream flavour, each with its own
// wrapper bound to its own real function. A program reaches the driver by symbol (linking
// libcuda, or dlsym with the exported name) or through cuGetProcAddress (base name, version and
// flags, which is how every CUDA runtime does it); both are looked up here.

#include <cuda.h>

#include <climits>
#include <cstdint>
#include <span>
#include <string_view>

namespace rmm::shim {

struct wrapped_entry_point {
  std::string_view base_name;         ///< as cuGetProcAddress knows it: "cuMemAlloc"
  int first_version;                  ///< the wrapped ABI starts with this CUDA version ...
  int end_version;                    ///< ... and ends before this one (INT_MAX: still current)
  bool per_thread;                    ///< the per-thread default stream flavour (_ptsz / _ptds)
  std::string_view exported_name;     ///< as dlsym knows it: "cuMemAlloc_v2"
  void* wrapper;                      ///< the shim's function with exactly that ABI
  bool submits_work;                  ///< submits work to a stream (program_streams.hpp)
  void* (*real_function)() noexcept;  ///< the driver's function it forwards to (null before binding)
};

/// Every wrapped entry point.
[[nodiscard]] std::span<wrapped_entry_point const> wrapped_entry_points() noexcept;

/// The wrapper for what cuGetProcAddress(`name`, `version`, `flags`) resolves to, or null when
/// the shim does not wrap it (for example cuMemAlloc below version 3020: the 32-bit ABI).
[[nodiscard]] wrapped_entry_point const* wrapper_for_proc(char const* name, int version, cuuint64_t flags) noexcept;

/// Whether an entry point the driver handed out as `found` may be replaced by `entry`'s wrapper:
/// always, but for one that submits work, which is replaced only when `found` is the very function
/// the wrapper forwards to (else its stream flavour or ABI could differ: the program keeps the
/// driver's, and the shim stops watching streams).
[[nodiscard]] bool wraps(wrapped_entry_point const& entry, void const* found) noexcept;

/// Whether a driver entry point of this name (as cuGetProcAddress or dlsym knows it) may submit work
/// to a stream: every `...Async` function but the allocator's own and a few that enqueue no work,
/// launches, graph launches and uploads, stream memory operations, callbacks, captures and stream
/// creation. One handed out unwrapped ends the shim's watch of the non-blocking streams.
[[nodiscard]] bool may_submit_work(std::string_view name) noexcept;

/// The wrapper for the exported driver symbol `name`, or null.
[[nodiscard]] wrapped_entry_point const* wrapper_for_symbol(char const* name) noexcept;

/// How programs found the wrappers: counted per row, for the verbose start and the report.
enum class found_through : std::uint8_t { dlsym, get_proc_address };
void note_installed(wrapped_entry_point const& entry, found_through how) noexcept;
[[nodiscard]] std::uint64_t times_installed(wrapped_entry_point const& entry, found_through how) noexcept;

}  // namespace rmm::shim
