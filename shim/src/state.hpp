// SPDX-License-Identifier: Apache-2.0
#pragma once

// Everything the shim keeps for the process, in one object that is created when the shim is
// loaded and never destroyed (hooks still run during exit). A forked child starts a fresh one: it
// shares no lock, no pool and no pending free with its parent.

#include "stacks/default_pools.hpp"
#include "devices.hpp"
#include "process_exit.hpp"
#include "frees/deferred_frees.hpp"
#include "stacks/device_stacks.hpp"
#include "ipc/ipc_exports.hpp"
#include "ipc/ipc_imports.hpp"
#include "stacks/ownership.hpp"
#include "stacks/physical_cache.hpp"
#include "stacks/process_pause.hpp"
#include "frees/program_streams.hpp"
#include "stacks/regions.hpp"
#include "report/report.hpp"

#include <array>
#include <atomic>
#include <mutex>

namespace rmm::shim {

struct shim_state {
  shim_state();

  ownership_table ownership;
  device_stacks stacks;
  program_streams streams;  // what the program's streams are doing (before `deferred`, which uses it)
  deferred_frees deferred;
  counters count;
  ipc_exports exports;  // blocks this process exported (cuIpcGetMemHandle)
  ipc_imports imports;  // shim handles of other processes this one opened
  /// Devices on which the program made its own memory pool the current one (cudaDeviceSetMemPool):
  /// its cudaMallocAsync calls asked for that pool, and pass through.
  std::array<std::atomic<bool>, max_devices> program_pool{};
  default_pool_table default_pools;  // the devices' default pools, which the stacks stand in for
  physical_cache physical;           // the program's own physical allocations it released
  process_pause pause;               // the gate of the served calls, and the pause behind it
  region_table regions;              // the tags of regions (rmm_shim_region_begin), and their pauses
};

/// What the report of `s` reads.
[[nodiscard]] inline report_sources report_sources_of(shim_state const& s) noexcept
{
  return {s.count, s.stacks, s.deferred, s.streams, s.pause, s.regions, s.physical, {}};
}

/// The same with what the driver holds for CUDA graphs on the devices with stacks, for a report
/// asked while the program runs (it calls the driver).
[[nodiscard]] inline report_sources live_report_sources_of(shim_state const& s) noexcept
{
  auto sources = report_sources_of(s);
  for (int device = 0; device < max_devices; ++device) {
    if (s.stacks.statistics(device)) { sources.graphs[static_cast<std::size_t>(device)] = graph_memory_on(device); }
  }
  return sources;
}

namespace detail {
inline std::atomic<shim_state*> current_state{nullptr};  // made at load, replaced in a forked child
[[nodiscard]] shim_state& first_state() noexcept;
}  // namespace detail

[[nodiscard]] inline shim_state& state() noexcept
{
  if (auto* s = detail::current_state.load(std::memory_order_acquire); s != nullptr) [[likely]] { return *s; }
  return detail::first_state();
}

/// Replaces the state in a forked child (the parent's is abandoned, never touched again).
void renew_state_after_fork() noexcept;

}  // namespace rmm::shim
