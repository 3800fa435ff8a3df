// SPDX-License-Identifier: Apache-2.0
#include "pause/pause_control.hpp"

#include "driver/contexts.hpp"
#include "pause/device_work_wait.hpp"
#include "serving/dispatch.hpp"
#include "driver/graph_memory.hpp"
#include "pause/pause_faults.hpp"
#include "driver/real_driver.hpp"
#include "settings.hpp"
#include "state.hpp"

#include <rmm/error.hpp>
#include <rmm/format_bytes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace rmm::shim {

namespace {

using clock = std::chrono::steady_clock;

double milliseconds_since(clock::time_point start)
{
  return std::chrono::duration<double, std::milli>(clock::now() - start).count();
}

/// The devices that have a stack, of any tag.
std::vector<int> devices_with_stacks(shim_state const& s)
{
  std::vector<int> devices;
  for (int device = 0; device < max_devices; ++device) {
    if (s.stacks.any(device)) { devices.push_back(device); }
  }
  return devices;
}

/// One stack: a device and a tag.
struct stack_id {
  int device;
  region_id region;
};

/// The stacks of tag `only`, or of every tag not paused on its own (nothing: the whole process).
std::vector<stack_id> stacks_to_pause(shim_state const& s, std::optional<region_id> only)
{
  std::vector<stack_id> stacks;
  for (int device = 0; device < max_devices; ++device) {
    for (std::size_t r = 0; r < max_regions; ++r) {
      auto const region = static_cast<region_id>(r);
      if (s.stacks.find(device, region) == nullptr) { continue; }
      if (only ? region == *only : !s.regions.paused(region)) { stacks.push_back({device, region}); }
    }
  }
  return stacks;
}

/// Every built stack that is paused, whatever paused it.
std::vector<stack_id> paused_stacks(shim_state const& s)
{
  std::vector<stack_id> stacks;
  for (int device = 0; device < max_devices; ++device) {
    for (std::size_t r = 0; r < max_regions; ++r) {
      if (s.stacks.paused(device, static_cast<region_id>(r))) { stacks.push_back({device, static_cast<region_id>(r)}); }
    }
  }
  return stacks;
}

/// Why those stacks cannot pause, or empty.
std::string why_not_pausable(shim_state const& s, std::vector<stack_id> const& stacks)
{
  for (auto const& [device, region] : stacks) {
    if (auto why = s.stacks.why_not_pausable(device, region)) { return *why; }
  }
  return {};
}

/// Whether a pause in `contents` drops the contents of tag `region`.
bool discards(shim_state const& s, pause_contents contents, region_id region)
{
  return contents == pause_contents::discard || (contents == pause_contents::as_tagged && s.regions.discards(region));
}

/// The tag `name`, or why there is none, for people.
std::optional<region_id> tag_named(shim_state const& s, std::string const& name, std::string& why)
{
  if (auto const id = s.regions.find(name)) { return id; }
  if (auto bad = region_table::why_not_a_name(name); !bad.empty()) {
    why = bad;
    return std::nullopt;
  }
  std::string known;
  for (std::size_t id = 1; id <= s.regions.count(); ++id) {
    known += fmt::format("{}'{}'", known.empty() ? "" : ", ", s.regions.name(static_cast<region_id>(id)));
  }
  why = fmt::format("no region of this process is tagged '{}' ({}); a tag exists once a region names it", name,
                    known.empty() ? "it has named none" : "its tags: " + known);
  return std::nullopt;
}

/// Why the process cannot pause now, or empty: the checks that change nothing.
std::string why_not_now(shim_state const& s)
{
  if (!settings().enabled) {
    return "the shim is switched off in this process (RMM_SHIM_ENABLED=false): it holds no memory to pause";
  }
  if (exiting()) { return "the process is exiting"; }
  if (s.pause.status().paused) { return "the process is paused already: resume it first"; }
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

/// A stack paused by a pause still under way, with what it gave back.
struct paused_device {
  int device;
  region_id region;
  device_stacks::paused_memory memory;
};

/// Resumes the stacks paused so far after a later one failed; returns those that cannot be.
std::vector<paused_device> undo_pause(shim_state& s, std::vector<paused_device> const& paused, std::string& message)
{
  std::vector<paused_device> still;
  for (auto const& p : paused) {
    try {
      s.stacks.resume(p.device, p.region, settings().pause_keeps_host_memory);
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

/// The devices of `stacks` (stack_id or paused_device), each once.
template <class Stacks>
std::vector<int> devices_of(Stacks const& stacks)
{
  std::vector<int> devices;
  for (auto const& stack : stacks) {
    if (std::find(devices.begin(), devices.end(), stack.device) == devices.end()) { devices.push_back(stack.device); }
  }
  return devices;
}

/// What pause_each did: every stack paused (`failure` empty), or why one could not be and the
/// stacks paused before it that could not be resumed either (they stay paused).
struct pausing {
  std::vector<paused_device> paused;
  std::string failure;
};

/// Pauses each of `stacks`, dropping the contents of a tag where `discard(region)`. When one
/// fails, those paused before it are resumed; `what` names the pause in the message.
template <class Discard>
pausing pause_each(shim_state& s, std::vector<stack_id> const& stacks, Discard&& discard, std::string const& what)
{
  pausing result;
  for (auto const& [device, region] : stacks) {
    try {
      result.paused.push_back({device, region, s.stacks.pause(device, region, discard(region))});
    } catch (std::exception const& e) {
      result.failure = fmt::format("cannot pause {}device {}: {}", what, device, e.what());
      result.paused  = undo_pause(s, result.paused, result.failure);
      return result;
    }
  }
  return result;
}

/// Tells each tag what the pause did with it.
void note_tag_pauses(shim_state& s, std::vector<paused_device> const& paused, pause_contents contents)
{
  for (std::size_t r = 1; r <= s.regions.count(); ++r) {
    auto const region = static_cast<region_id>(r);
    device_stacks::paused_memory total{};
    bool any = false;
    for (auto const& p : paused) {
      if (p.region != region) { continue; }
      any = true;
      total.device_bytes += p.memory.device_bytes;
      total.saved_bytes += p.memory.saved_bytes;
    }
    if (any) {
      s.regions.note_process_pause(region, total.device_bytes, total.saved_bytes, discards(s, contents, region));
    }
  }
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

/// The bytes the program holds in `stacks`' blocks.
std::size_t live_bytes(shim_state const& s, std::vector<stack_id> const& stacks)
{
  std::size_t live = 0;
  for (auto const& [device, region] : stacks) {
    if (auto const stats = s.stacks.statistics(device, region)) { live += stats->allocated_bytes; }
  }
  return live;
}

/// What a pause says of the contents it kept and the `discarded` bytes it dropped.
std::string contents_text(device_stacks::paused_memory const& total, std::size_t discarded)
{
  auto text = fmt::format("{} of contents kept in host memory{}", rmm::format_bytes(total.saved_bytes),
                          total.staged ? "" : " (copied without page-locked staging, more slowly)");
  if (discarded == 0) { return text; }
  if (total.saved_bytes == 0) { return fmt::format("{} of contents discarded", rmm::format_bytes(discarded)); }
  return fmt::format("{} and {} discarded", text, rmm::format_bytes(discarded));
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

/// The tags paused on their own.
std::vector<region_id> paused_tags(shim_state const& s)
{
  std::vector<region_id> tags;
  for (std::size_t r = 1; r <= s.regions.count(); ++r) {
    if (s.regions.paused(static_cast<region_id>(r))) { tags.push_back(static_cast<region_id>(r)); }
  }
  return tags;
}

/// Resumes the paused stack of tag `region` on `device`. The stacks that ran meanwhile may hold the
/// memory it needs, free (the program's other phase allocated and freed it): when the device lacks
/// it, their free memory goes back to the device and the resume is tried once more.
void resume_beside_running_stacks(shim_state& s, int device, region_id region)
{
  try {
    s.stacks.resume(device, region, settings().pause_keeps_host_memory);
    return;
  } catch (rmm::out_of_memory const&) {
    if (release_free_memory_at_rest(device) == 0) { throw; }
  }
  s.stacks.resume(device, region, settings().pause_keeps_host_memory);
}

/// Resumes tags paused on their own; the caller holds the pause operation. Every served call is
/// kept out while their stacks map their memory back; the frees held for them are applied after.
control_outcome resume_tags(shim_state& s, std::vector<region_id> const& tags)
{
  auto const start = clock::now();
  if (!s.pause.close()) { return {false, "cannot resume: a pause of the whole process is under way"}; }
  std::vector<kept_block> held;
  std::vector<std::string> names;
  for (auto const region : tags) {
    auto const stacks = stacks_to_pause(s, region);
    for (auto const& stack : stacks) { (void)release_cached_physical_memory(stack.device); }
    for (auto const& [device, r] : stacks) {
      try {
        resume_beside_running_stacks(s, device, r);
      } catch (std::exception const& e) {
        reopen(s);
        for (auto const& block : held) { give_back_held_free(block); }
        return {false,
                fmt::format("cannot resume tag '{}' on device {}: {}; its contents stay in host memory and "
                            "it stays paused: free device memory, then resume it again{}",
                            s.regions.name(region), device, e.what(),
                            names.empty() ? "" : fmt::format(" (resumed before it: {})", fmt::join(names, ", ")))};
      }
    }
    for (auto const& block : s.regions.mark_resumed(region)) { held.push_back(block); }
    names.push_back(fmt::format("'{}'", s.regions.name(region)));
  }
  reopen(s);
  for (auto const& block : held) { give_back_held_free(block); }
  return {true, fmt::format("resumed tag{} {} in {:.0f} ms; {} free{} made while paused applied",
                            names.size() == 1 ? "" : "s", fmt::join(names, ", "), milliseconds_since(start),
                            held.size(), held.size() == 1 ? "" : "s")};
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
  auto const stacks  = stacks_to_pause(s, std::nullopt);
  auto why           = why_not_pausable(s, stacks);
  if (why.empty()) { why = why_not_at_rest(s); }
  if (why.empty()) { why = wait_for_devices(s, devices); }
  if (!why.empty()) {
    reopen(s);
    return {false, "cannot pause: " + why + "; nothing is paused"};
  }
  std::size_t released = 0;
  for (auto const device : devices) { released += release_free_memory_at_rest(device); }
  std::size_t discarded = 0;  // the live bytes of the stacks whose contents go
  for (auto const& stack : stacks) {
    if (discards(s, contents, stack.region)) { discarded += live_bytes(s, {stack}); }
  }
  auto [paused, failure] = pause_each(
    s, stacks, [&](region_id region) { return discards(s, contents, region); }, "");
  if (!failure.empty()) {
    if (paused.empty()) {
      reopen(s);
      failure +=
        fmt::format("; nothing is paused ({} of free memory went back to the device)", rmm::format_bytes(released));
    } else {
      auto const kept = sum(paused);
      s.pause.paused(kept.device_bytes, kept.saved_bytes, kept.staged, milliseconds_since(start));
      watch_for_faults(devices_of(paused));
    }
    return {false, failure};
  }
  auto const graphs = give_back_idle_graph_memory(devices);
  auto const ms     = milliseconds_since(start);
  auto const total  = sum(paused);
  s.pause.paused(total.device_bytes, total.saved_bytes, total.staged, ms);
  note_tag_pauses(s, paused, contents);
  watch_for_faults(devices);
  return {true, fmt::format("paused: {} of device memory given back ({} free before), {}, in {:.0f} ms{}{}",
                            rmm::format_bytes(total.device_bytes + released), rmm::format_bytes(released),
                            contents_text(total, discarded), ms, graphs, not_paused(s))};
}

control_outcome resume_process()
{
  auto& s = state();
  // A pause under way gives up if it still waits for device work; one past that finishes, and is
  // resumed below.
  bool const pausing = s.pause.gate.closed() && !s.pause.status().paused;
  if (pausing) { s.pause.cancel(); }
  std::lock_guard operation{s.pause.operation()};
  if (!s.pause.status().paused && !pausing) {
    if (auto tags = paused_tags(s); !tags.empty()) { return resume_tags(s, tags); }
  }
  if (!s.pause.status().paused) {
    if (pausing) {
      return {true,
              "the pause under way ended without pausing anything (a resume cancels a pause still waiting for "
              "device work)"};
    }
    return {false, "cannot resume: the process is not paused"};
  }
  auto const start = clock::now();
  auto paused      = paused_stacks(s);  // not those an earlier call resumed; tags paused on their own too
  stop_watching_for_faults();
  if (auto why = faulted_while_paused(devices_of(paused)); !why.empty()) {
    return {false, "cannot resume: " + why + "; the process stays paused"};
  }
  for (auto const device : devices_of(paused)) {
    // Physical allocations the program released, kept for it, are free memory the resume may need.
    (void)release_cached_physical_memory(device);
  }
  for (auto const& [device, region] : paused) {
    try {
      s.stacks.resume(device, region, settings().pause_keeps_host_memory);
    } catch (std::exception const& e) {
      std::erase_if(paused, [&s](stack_id const& p) { return !s.stacks.paused(p.device, p.region); });
      watch_for_faults(devices_of(paused));
      return {false, fmt::format("cannot resume device {}: {}; the contents stay in host memory and the process stays "
                                 "paused: free device memory, then resume again",
                                 device, e.what())};
    }
  }
  std::vector<kept_block> held_by_tags;
  for (auto const region : paused_tags(s)) {
    for (auto const& block : s.regions.mark_resumed(region)) { held_by_tags.push_back(block); }
  }
  auto held = s.pause.open();
  held.insert(held.end(), held_by_tags.begin(), held_by_tags.end());
  for (auto const& block : held) { give_back_held_free(block); }
  auto const ms = milliseconds_since(start);
  s.pause.resumed(ms);
  std::size_t kept = 0;
  for (auto const device : devices_of(paused)) { kept += s.stacks.kept_host_bytes(device); }
  return {true, fmt::format("resumed in {:.0f} ms; {} free{} made while paused applied{}", ms, held.size(),
                            held.size() == 1 ? "" : "s", kept_host_memory_text(kept))};
}

control_outcome pause_tag(std::string const& tag, pause_contents contents)
{
  auto& s = state();
  std::lock_guard operation{s.pause.operation()};
  auto const start = clock::now();
  if (auto why = why_not_now(s); !why.empty()) { return {false, "cannot pause: " + why}; }
  std::string why;
  auto const region = tag_named(s, tag, why);
  if (!region) { return {false, "cannot pause: " + why}; }
  if (s.regions.paused(*region)) { return {false, fmt::format("cannot pause: tag '{}' is paused already", tag)}; }
  auto const stacks = stacks_to_pause(s, *region);
  if (why = why_not_pausable(s, stacks); !why.empty()) { return {false, "cannot pause: " + why}; }
  s.pause.clear_cancel();
  if (!s.pause.close()) { return {false, "cannot pause: the process is paused already"}; }
  // Every served call waits from here; the tag's stacks are at rest once the device work is done.
  why = why_not_at_rest(s);
  if (why.empty()) { why = wait_for_devices(s, devices_with_stacks(s)); }
  if (!why.empty()) {
    reopen(s);
    return {false, fmt::format("cannot pause tag '{}': {}; nothing is paused", tag, why)};
  }
  bool const discard           = discards(s, contents, *region);
  auto const live              = discard ? live_bytes(s, stacks) : 0;
  auto const [paused, failure] = pause_each(
    s, stacks, [discard](region_id) { return discard; }, fmt::format("tag '{}' on ", tag));
  if (!failure.empty()) {
    if (paused.empty()) {
      reopen(s);
      return {false, failure + "; nothing is paused"};
    }
    auto const kept = sum(paused);
    s.regions.mark_paused(*region, kept.device_bytes, kept.saved_bytes, discard);
    reopen(s);
    return {false, failure};
  }
  auto const total = sum(paused);
  s.regions.mark_paused(*region, total.device_bytes, total.saved_bytes, discard);
  auto const graphs = give_back_idle_graph_memory(devices_of(stacks));
  reopen(s);  // the frees held meanwhile: those of the tag wait for its resume
  return {true, fmt::format("paused tag '{}': {} of device memory given back, {}, in {:.0f} ms{}", tag,
                            rmm::format_bytes(total.device_bytes), contents_text(total, live),
                            milliseconds_since(start), graphs)};
}

control_outcome resume_tag(std::string const& tag)
{
  auto& s = state();
  std::lock_guard operation{s.pause.operation()};
  std::string why;
  auto const region = tag_named(s, tag, why);
  if (!region) { return {false, "cannot resume: " + why}; }
  if (s.pause.status().paused) {
    return {false, "cannot resume a tag while the whole process is paused: resume the process (without a tag)"};
  }
  if (!s.regions.paused(*region)) { return {false, fmt::format("cannot resume: tag '{}' is not paused", tag)}; }
  return resume_tags(s, {*region});
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
