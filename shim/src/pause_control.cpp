// SPDX-License-Identifier: Apache-2.0
#include "pause_control.hpp"

#include "dispatch.hpp"
#include "settings.hpp"
#include "state.hpp"

#include <rmm/format_bytes.hpp>

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

namespace rmm::shim {

namespace {

using clock = std::chrono::steady_clock;

double milliseconds_since(clock::time_point start)
{
  return std::chrono::duration<double, std::milli>(clock::now() - start).count();
}

/// The devices that have a stack.
std::vector<int> devices_with_stacks(shim_state const& s)
{
  std::vector<int> devices;
  for (int device = 0; device < max_devices; ++device) {
    if (s.stacks.find(device) != nullptr) { devices.push_back(device); }
  }
  return devices;
}

/// Why the process cannot pause now, or empty: the checks that change nothing.
std::string why_not_now(shim_state const& s)
{
  if (!settings().enabled) {
    return "the shim is switched off in this process (RMM_SHIM_ENABLED=false): it holds no memory to pause";
  }
  if (exiting()) { return "the process is exiting"; }
  if (s.pause.status().paused) { return "the process is paused already: resume it first"; }
  for (auto const device : devices_with_stacks(s)) {
    if (auto why = s.stacks.why_not_pausable(device)) { return *why; }
  }
  if (s.exports.any()) {
    return "blocks of this process are exported through CUDA IPC (cudaIpcGetMemHandle): other processes may map "
           "their memory, which a pause cannot take from them; pause once they are freed";
  }
  return {};
}

/// What passed the stacks by and so stays where it is, for the pause's message.
std::string not_paused(shim_state const& s)
{
  std::string text;
  for (auto const& [reason, what] : {std::pair{pass_reason::virtual_memory, "mapped itself (cuMemCreate)"},
                                     std::pair{pass_reason::managed, "allocated as managed memory"},
                                     std::pair{pass_reason::program_pool, "allocated from memory pools of its own"}}) {
    if (auto const bytes = s.count.passed_bytes(reason); bytes > 0) {
      text += fmt::format("{}{} {}", text.empty() ? "" : ", ", rmm::format_bytes(bytes), what);
    }
  }
  return text.empty() ? text
                      : "; not paused, since the stacks never held it: what the program " + text + " over its run";
}

/// Resumes the devices paused so far after a later one failed; false when one of them cannot.
bool undo_pause(shim_state& s, std::vector<int> const& paused, std::string& message)
{
  bool all = true;
  for (auto const device : paused) {
    try {
      s.stacks.resume(device);
    } catch (std::exception const& e) {
      message += fmt::format("; device {} cannot be resumed either ({}): the process stays paused", device, e.what());
      all = false;
    }
  }
  return all;
}

}  // namespace

control_outcome pause_process(bool discard)
{
  auto& s = state();
  std::lock_guard operation{s.pause.operation()};
  auto const start = clock::now();
  if (auto why = why_not_now(s); !why.empty()) { return {false, "cannot pause: " + why}; }
  if (!s.pause.close()) { return {false, "cannot pause: the process is paused already"}; }
  // The program's calls wait from here; the stacks are at rest.
  if (s.streams.capturing()) {
    for (auto const& block : s.pause.open()) { give_back_held_free(block); }
    return {false, "cannot pause: a stream is capturing a CUDA graph; pause between captures"};
  }
  auto const devices   = devices_with_stacks(s);
  std::size_t released = 0;
  for (auto const device : devices) { released += release_free_memory_at_rest(device); }
  device_stacks::paused_memory total{};
  std::vector<int> paused;
  for (auto const device : devices) {
    try {
      auto const done = s.stacks.pause(device, discard);
      total.device_bytes += done.device_bytes;
      total.saved_bytes += done.saved_bytes;
      total.pinned = total.pinned && done.pinned;
      paused.push_back(device);
    } catch (std::exception const& e) {
      auto message = fmt::format("cannot pause device {}: {}", device, e.what());
      if (undo_pause(s, paused, message)) {
        for (auto const& block : s.pause.open()) { give_back_held_free(block); }
      } else {
        s.pause.paused(0, 0, true, milliseconds_since(start));
      }
      return {false, message};
    }
  }
  auto const ms = milliseconds_since(start);
  s.pause.paused(total.device_bytes, total.saved_bytes, total.pinned, ms);
  return {true,
          fmt::format("paused: {} of device memory given back ({} free before), {} of contents {}, in {:.0f} ms{}",
                      rmm::format_bytes(total.device_bytes + released), rmm::format_bytes(released),
                      rmm::format_bytes(total.saved_bytes),
                      discard        ? "discarded"
                      : total.pinned ? "kept in page-locked host memory"
                                     : "kept in pageable host memory (no page-locked memory to be had)",
                      ms, not_paused(s))};
}

control_outcome resume_process()
{
  auto& s = state();
  std::lock_guard operation{s.pause.operation()};
  if (!s.pause.status().paused) { return {false, "cannot resume: the process is not paused"}; }
  auto const start = clock::now();
  for (auto const device : devices_with_stacks(s)) {
    if (!s.stacks.paused(device)) { continue; }  // resumed by an earlier call that stopped at a later device
    try {
      s.stacks.resume(device);
    } catch (std::exception const& e) {
      return {false, fmt::format("cannot resume device {}: {}; the contents stay in host memory and the process stays "
                                 "paused: free device memory, then resume again",
                                 device, e.what())};
    }
  }
  auto const held = s.pause.open();
  for (auto const& block : held) { give_back_held_free(block); }
  auto const ms = milliseconds_since(start);
  s.pause.resumed(ms);
  return {true, fmt::format("resumed in {:.0f} ms; {} free{} made while paused applied", ms, held.size(),
                            held.size() == 1 ? "" : "s")};
}

control_outcome release_process()
{
  if (state().pause.gate.closed()) {
    return {false, "cannot release: the process is paused (it holds no device memory)"};
  }
  std::size_t bytes = 0;
  for (int device = 0; device < max_devices; ++device) { bytes += release_free_memory(device); }
  return {true, fmt::format("released {} of free device memory", rmm::format_bytes(bytes))};
}

}  // namespace rmm::shim
