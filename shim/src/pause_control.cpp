// SPDX-License-Identifier: Apache-2.0
#include "pause_control.hpp"

#include "contexts.hpp"
#include "device_work_wait.hpp"
#include "dispatch.hpp"
#include "pause_faults.hpp"
#include "real_driver.hpp"
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
  return {};
}

/// Why the process cannot pause, asked with the gate closed (a call just before it may have begun
/// a capture or exported a block), or empty.
std::string why_not_at_rest(shim_state const& s)
{
  if (s.streams.capturing()) { return "a stream is capturing a CUDA graph; pause between captures"; }
  if (s.exports.any()) {
    return "blocks of this process are exported through CUDA IPC (cudaIpcGetMemHandle): other processes may map "
           "their memory, which a pause cannot take from them; pause once they are freed";
  }
  return {};
}

/// Waits for the work queued on every device with a stack, all of it before any memory goes: a
/// kernel on one device may use another's memory (peer access). Gives up after `pause_device_wait`
/// seconds, or when a resume cancels the pause. Why not, or empty.
std::string wait_for_devices(shim_state& s, std::vector<int> const& devices)
{
  auto const limit = settings().pause_device_wait;
  auto const waited =
    wait_for_device_work(devices, clock::now() + std::chrono::seconds{limit}, [&s] { return s.pause.cancelled(); });
  switch (waited.end) {
    case device_wait_end::done: return {};
    case device_wait_end::failed: return waited.error;
    case device_wait_end::timed_out:
      return fmt::format(
        "the device work submitted before it did not finish within {} s (pause_device_wait): a stream may wait "
        "for a host function, an event or a kernel that does not end; pause once that work is done",
        limit);
    case device_wait_end::cancelled: return "a resume cancelled it while it waited for the device work before it";
  }
  return {};
}

/// Opens the gate again after a pause that did not happen: the frees held meanwhile are applied.
void reopen(shim_state& s)
{
  for (auto const& block : s.pause.open()) { give_back_held_free(block); }
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

/// A device paused by a pause still under way, with what it gave back.
struct paused_device {
  int device;
  device_stacks::paused_memory memory;
};

/// Resumes the devices paused so far after a later one failed; returns those that cannot be.
std::vector<paused_device> undo_pause(shim_state& s, std::vector<paused_device> const& paused, std::string& message)
{
  std::vector<paused_device> still;
  for (auto const& p : paused) {
    try {
      s.stacks.resume(p.device, settings().pause_keeps_host_memory);
    } catch (std::exception const& e) {
      message += fmt::format(
        "; device {} cannot be resumed either ({}): the process stays paused, resume it once the "
        "device has the memory",
        p.device, e.what());
      still.push_back(p);
    }
  }
  return still;
}

std::vector<int> paused_devices(std::vector<paused_device> const& paused)
{
  std::vector<int> devices;
  for (auto const& p : paused) { devices.push_back(p.device); }
  return devices;
}

device_stacks::paused_memory sum(std::vector<paused_device> const& paused)
{
  device_stacks::paused_memory total{};
  for (auto const& p : paused) {
    total.device_bytes += p.memory.device_bytes;
    total.saved_bytes += p.memory.saved_bytes;
    total.staged = total.staged && p.memory.staged;
  }
  return total;
}

/// What a resume says of the host memory it kept for the next pause.
std::string kept_host_memory_text(std::size_t bytes)
{
  if (bytes == 0) { return {}; }
  return fmt::format("; {} of host memory kept for the next pause{}", rmm::format_bytes(bytes),
                     settings().pause_keeps_host_memory
                       ? " (rmm-ctl release gives it back)"
                       : " until the system needs it (rmm-ctl release gives it back now)");
}

}  // namespace

control_outcome pause_process(pause_contents contents)
{
  auto& s = state();
  std::lock_guard operation{s.pause.operation()};
  auto const start = clock::now();
  if (auto why = why_not_now(s); !why.empty()) { return {false, "cannot pause: " + why}; }
  s.pause.clear_cancel();  // before the gate closes: a resume from then on cancels this pause
  if (!s.pause.close()) { return {false, "cannot pause: the process is paused already"}; }
  // The program's calls wait from here; the stacks are at rest.
  auto const devices = devices_with_stacks(s);
  auto why           = why_not_at_rest(s);
  if (why.empty()) { why = wait_for_devices(s, devices); }
  if (!why.empty()) {
    reopen(s);
    return {false, "cannot pause: " + why + "; nothing is paused"};
  }
  std::size_t released = 0;
  for (auto const device : devices) { released += release_free_memory_at_rest(device); }
  std::vector<paused_device> paused;
  for (auto const device : devices) {
    try {
      paused.push_back({device, s.stacks.pause(device, contents == pause_contents::discard)});
    } catch (std::exception const& e) {
      auto message      = fmt::format("cannot pause device {}: {}", device, e.what());
      auto const remain = undo_pause(s, paused, message);
      if (remain.empty()) {
        reopen(s);
        message +=
          fmt::format("; nothing is paused ({} of free memory went back to the device)", rmm::format_bytes(released));
      } else {
        auto const kept = sum(remain);
        s.pause.paused(kept.device_bytes, kept.saved_bytes, kept.staged, milliseconds_since(start));
        watch_for_faults(paused_devices(remain));
      }
      return {false, message};
    }
  }
  auto const ms    = milliseconds_since(start);
  auto const total = sum(paused);
  s.pause.paused(total.device_bytes, total.saved_bytes, total.staged, ms);
  watch_for_faults(devices);
  return {true,
          fmt::format("paused: {} of device memory given back ({} free before), {} of contents {}, in {:.0f} ms{}",
                      rmm::format_bytes(total.device_bytes + released), rmm::format_bytes(released),
                      rmm::format_bytes(total.saved_bytes),
                      contents == pause_contents::discard ? "discarded"
                      : total.staged                      ? "kept in host memory"
                                     : "kept in host memory (copied without page-locked staging, more slowly)",
                      ms, not_paused(s))};
}

control_outcome resume_process()
{
  auto& s = state();
  // A pause under way gives up if it still waits for device work; one past that finishes, and is
  // resumed below.
  bool const pausing = s.pause.gate.closed() && !s.pause.status().paused;
  if (pausing) { s.pause.cancel(); }
  std::lock_guard operation{s.pause.operation()};
  if (!s.pause.status().paused) {
    if (pausing) {
      return {true,
              "the pause under way ended without pausing anything (a resume cancels a pause still waiting for "
              "device work)"};
    }
    return {false, "cannot resume: the process is not paused"};
  }
  auto const start = clock::now();
  std::vector<int> paused;
  for (auto const device : devices_with_stacks(s)) {
    if (s.stacks.paused(device)) { paused.push_back(device); }  // not those an earlier call resumed
  }
  stop_watching_for_faults();
  if (auto why = faulted_while_paused(paused); !why.empty()) {
    return {false, "cannot resume: " + why + "; the process stays paused"};
  }
  for (auto const device : paused) {
    // Physical allocations the program released, kept for it, are free memory the resume may need.
    (void)release_cached_physical_memory(device);
    try {
      s.stacks.resume(device, settings().pause_keeps_host_memory);
    } catch (std::exception const& e) {
      std::erase_if(paused, [&s](int d) { return !s.stacks.paused(d); });
      watch_for_faults(paused);
      return {false, fmt::format("cannot resume device {}: {}; the contents stay in host memory and the process stays "
                                 "paused: free device memory, then resume again",
                                 device, e.what())};
    }
  }
  auto const held = s.pause.open();
  for (auto const& block : held) { give_back_held_free(block); }
  auto const ms = milliseconds_since(start);
  s.pause.resumed(ms);
  std::size_t kept = 0;
  for (auto const device : paused) { kept += s.stacks.kept_host_bytes(device); }
  return {true, fmt::format("resumed in {:.0f} ms; {} free{} made while paused applied{}", ms, held.size(),
                            held.size() == 1 ? "" : "s", kept_host_memory_text(kept))};
}

control_outcome release_process()
{
  if (state().pause.gate.closed()) {
    return {false, "cannot release: the process is paused (it holds no device memory)"};
  }
  auto const released = release_all_free_memory();
  return {true, fmt::format("released {} of free device memory{}", rmm::format_bytes(released.device_bytes),
                            released.host_bytes > 0 ? fmt::format(" and {} of host memory kept for the next pause",
                                                                  rmm::format_bytes(released.host_bytes))
                                                    : std::string{})};
}

released_memory release_all_free_memory() noexcept
{
  released_memory released;
  for (int device = 0; device < max_devices; ++device) {
    released.device_bytes += release_free_memory(device);
    try {
      released.host_bytes += state().stacks.release_kept_host_memory(device);
    } catch (...) {  // its lock failed: the memory stays kept, for a later release
    }
  }
  return released;
}

}  // namespace rmm::shim
