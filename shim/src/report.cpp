#include "report.hpp"

#include "deferred_frees.hpp"
#include "device_stacks.hpp"
#include "hook_table.hpp"
#include "thread_cache.hpp"
#include "thread_records.hpp"

#include <rmm/format_bytes.hpp>

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <mutex>
#include <vector>

namespace rmm::shim {

namespace {

enum field : std::size_t {
  allocations,
  allocated_bytes,
  kept_reuses,
  frees,
  freed_bytes,
  failures,
  timed_calls,
  timed_ns,
  fields
};
constexpr std::size_t reasons = static_cast<std::size_t>(pass_reason::count);

/// One thread's counts: written only by that thread (relaxed load + store, no locked instruction),
/// read by the report. Devices beyond the first few go to the shared block.
struct thread_block {
  static constexpr int devices = 16;
  std::array<std::array<std::atomic<std::uint64_t>, fields>, devices> device{};
  std::array<std::atomic<std::uint64_t>, reasons> passes{};
};

void fold_thread_block(void* value);

struct registry {
  thread_records<thread_block> threads{fold_thread_block};
  std::array<std::array<std::atomic<std::uint64_t>, fields>, max_devices> shared{};  // atomics
  std::array<std::atomic<std::uint64_t>, reasons> shared_passes{};
};

registry& the_registry()
{
  static auto* r = new registry;  // never destroyed: counted into at exit
  return *r;
}

/// The thread's block, once made, or null. Trivially destructible, so reaching it costs no guard.
thread_local thread_block* cached_block = nullptr;
/// Set when the thread's block was folded into the shared counts at its exit: anything the thread
/// still counts after that (a free in another library's exit handler) goes to the shared counts.
thread_local bool block_folded = false;

/// Folds a thread's block into the shared counts when the thread ends (thread_records.hpp says
/// when that is), under the list's lock, so that the report counts it once.
void fold_thread_block(void* value)
{
  auto& r = the_registry();
  r.threads.remove(static_cast<thread_block*>(value), [&r](thread_block const& block) {
    for (int d = 0; d < thread_block::devices; ++d) {
      for (std::size_t f = 0; f < fields; ++f) {
        r.shared[static_cast<std::size_t>(d)][f].fetch_add(block.device[static_cast<std::size_t>(d)][f].load());
      }
    }
    for (std::size_t p = 0; p < reasons; ++p) { r.shared_passes[p].fetch_add(block.passes[p].load()); }
  });
  cached_block = nullptr;
  block_folded = true;
}

[[gnu::noinline]] thread_block* make_thread_block()
{
  if (block_folded) { return nullptr; }         // the thread is ending: its block is gone
  cached_block = the_registry().threads.add();  // null: the shared counts
  return cached_block;
}

/// The thread's own counters; null once the thread's end folded them into the shared ones.
thread_block* this_thread_block()
{
  if (auto* block = cached_block; block != nullptr) [[likely]] { return block; }
  return make_thread_block();
}

void bump(std::atomic<std::uint64_t>& value, std::uint64_t by) noexcept
{
  value.store(value.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

/// Adds to up to three counters of `device`: the thread's own, or the shared ones (one lookup of
/// the thread's block for all). A field of `fields` is skipped.
void add(int device,
         field f1,
         std::uint64_t by1,
         field f2          = fields,
         std::uint64_t by2 = 0,
         field f3          = fields,
         std::uint64_t by3 = 0) noexcept
{
  if (!has_device_slot(device)) { return; }
  auto* block = device < thread_block::devices ? this_thread_block() : nullptr;
  if (block != nullptr) [[likely]] {
    auto& mine = block->device[static_cast<std::size_t>(device)];
    bump(mine[f1], by1);
    if (f2 != fields) { bump(mine[f2], by2); }
    if (f3 != fields) { bump(mine[f3], by3); }
    return;
  }
  auto& shared = the_registry().shared[static_cast<std::size_t>(device)];
  shared[f1].fetch_add(by1, std::memory_order_relaxed);
  if (f2 != fields) { shared[f2].fetch_add(by2, std::memory_order_relaxed); }
  if (f3 != fields) { shared[f3].fetch_add(by3, std::memory_order_relaxed); }
}

void raise(std::atomic<std::size_t>& peak, std::size_t value) noexcept
{
  auto seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {}
}

}  // namespace

char const* to_string(pass_reason reason) noexcept
{
  switch (reason) {
    case pass_reason::disabled: return "disabled";
    case pass_reason::null_or_empty: return "null or empty";
    case pass_reason::foreign_pointer: return "not the shim's memory";
    case pass_reason::other_context: return "not a primary context";
    case pass_reason::stream_capture: return "stream capture";
    case pass_reason::unknown_stream: return "a stream the driver does not know";
    case pass_reason::program_pool: return "program's own memory pool";
    case pass_reason::managed: return "managed memory";
    case pass_reason::virtual_memory: return "memory the program maps itself";
    case pass_reason::exiting: return "process exiting";
    case pass_reason::count: break;
  }
  return "?";
}

char const* json_name(pass_reason reason) noexcept
{
  switch (reason) {
    case pass_reason::disabled: return "disabled";
    case pass_reason::null_or_empty: return "null_or_empty";
    case pass_reason::foreign_pointer: return "foreign_pointer";
    case pass_reason::other_context: return "other_context";
    case pass_reason::stream_capture: return "stream_capture";
    case pass_reason::unknown_stream: return "unknown_stream";
    case pass_reason::program_pool: return "program_pool";
    case pass_reason::managed: return "managed";
    case pass_reason::virtual_memory: return "virtual_memory";
    case pass_reason::exiting: return "exiting";
    case pass_reason::count: break;
  }
  return "unknown";
}

void counters::served_allocation(int device, std::size_t bytes, bool kept_block) noexcept
{
  add(device, allocations, 1, allocated_bytes, bytes, kept_block ? kept_reuses : fields, 1);
  if (has_device_slot(device)) {
    auto const d    = static_cast<std::size_t>(device);
    auto const live = live_[d].fetch_add(bytes, std::memory_order_relaxed) + bytes;
    raise(peak_[d], live);
    raise(peak_since_reset_[d], live);
  }
}

std::size_t counters::peak_live_since_reset(int device) const noexcept
{
  return has_device_slot(device) ? peak_since_reset_[static_cast<std::size_t>(device)].load(std::memory_order_relaxed)
                                 : 0;
}

void counters::reset_peak_since(int device) noexcept
{
  if (!has_device_slot(device)) { return; }
  auto const d = static_cast<std::size_t>(device);
  peak_since_reset_[d].store(live_[d].load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void counters::served_free(int device, std::size_t bytes) noexcept
{
  add(device, frees, 1, freed_bytes, bytes);
  if (has_device_slot(device)) { live_[static_cast<std::size_t>(device)].fetch_sub(bytes, std::memory_order_relaxed); }
}

void counters::failed_allocation(int device) noexcept { add(device, failures, 1); }

void counters::device_reset(int device, std::size_t blocks, std::size_t bytes) noexcept
{
  if (!has_device_slot(device)) { return; }
  auto const d = static_cast<std::size_t>(device);
  live_[d].fetch_sub(std::min(bytes, live_[d].load(std::memory_order_relaxed)), std::memory_order_relaxed);
  resets_[d].fetch_add(1, std::memory_order_relaxed);
  reset_blocks_[d].fetch_add(blocks, std::memory_order_relaxed);
  reset_bytes_[d].fetch_add(bytes, std::memory_order_relaxed);
}

void counters::passed(pass_reason reason) noexcept
{
  auto const r = static_cast<std::size_t>(reason);
  if (auto* block = this_thread_block(); block != nullptr) [[likely]] {
    bump(block->passes[r], 1);
  } else {
    the_registry().shared_passes[r].fetch_add(1, std::memory_order_relaxed);
  }
}

void counters::timed(int device, std::uint64_t nanoseconds) noexcept
{
  add(device, timed_calls, 1, timed_ns, nanoseconds);
}

bool counters::should_time() noexcept
{
  thread_local std::uint64_t calls = 0;
  return (++calls % time_sample_rate) == 0;
}

counters::device_totals counters::totals(int device) const noexcept
{
  device_totals t{};
  if (!has_device_slot(device)) { return t; }
  std::array<std::uint64_t, fields> sum{};
  auto& r = the_registry();
  {
    std::lock_guard lock{r.threads.mutex()};
    for (std::size_t f = 0; f < fields; ++f) {
      sum[f] = r.shared[static_cast<std::size_t>(device)][f].load(std::memory_order_relaxed);
    }
    if (device < thread_block::devices) {
      for (auto const* block : r.threads.records()) {
        for (std::size_t f = 0; f < fields; ++f) {
          sum[f] += block->device[static_cast<std::size_t>(device)][f].load(std::memory_order_relaxed);
        }
      }
    }
  }
  t.allocations     = sum[allocations];
  t.allocated_bytes = sum[allocated_bytes];
  t.kept_reuses     = sum[kept_reuses];
  t.frees           = sum[frees];
  t.freed_bytes     = sum[freed_bytes];
  t.failures        = sum[failures];
  t.timed_calls     = sum[timed_calls];
  t.timed_ns        = sum[timed_ns];
  t.live_bytes      = live_[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
  t.peak_live_bytes = peak_[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
  t.resets          = resets_[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
  t.reset_blocks    = reset_blocks_[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
  t.reset_bytes     = reset_bytes_[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
  return t;
}

std::uint64_t counters::passes(pass_reason reason) const noexcept
{
  auto const p = static_cast<std::size_t>(reason);
  auto& r      = the_registry();
  std::lock_guard lock{r.threads.mutex()};
  auto total = r.shared_passes[p].load(std::memory_order_relaxed);
  for (auto const* block : r.threads.records()) { total += block->passes[p].load(std::memory_order_relaxed); }
  return total;
}

void counters::prepare() noexcept { (void)the_registry(); }

void counters::before_fork() noexcept { the_registry().threads.mutex().lock(); }

void counters::after_fork_in_parent() noexcept { the_registry().threads.mutex().unlock(); }

void counters::after_fork_in_child() noexcept
{
  auto& r = the_registry();
  for (auto* block : r.threads.records()) {
    for (auto& device : block->device) {
      for (auto& value : device) { value.store(0, std::memory_order_relaxed); }
    }
    for (auto& value : block->passes) { value.store(0, std::memory_order_relaxed); }
  }
  for (auto& device : r.shared) {
    for (auto& value : device) { value.store(0, std::memory_order_relaxed); }
  }
  for (auto& value : r.shared_passes) { value.store(0, std::memory_order_relaxed); }
  r.threads.mutex().unlock();
}

bool reached_cuda(counters const& c) noexcept
{
  for (int device = 0; device < max_devices; ++device) {
    auto const t = c.totals(device);
    if (t.allocations + t.frees + t.failures != 0) { return true; }
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(pass_reason::count); ++r) {
    if (c.passes(static_cast<pass_reason>(r)) != 0) { return true; }
  }
  auto const& entries = wrapped_entry_points();
  return std::any_of(entries.begin(), entries.end(), [](auto const& entry) {
    return times_installed(entry, found_through::dlsym) + times_installed(entry, found_through::get_proc_address) != 0;
  });
}

int write_report(std::FILE* out,
                 bool json,
                 counters const& c,
                 device_stacks const& stacks,
                 deferred_frees const& pending)
{
  using rmm::format_bytes;
  std::string text;
  std::string devices_json;
  for (int device = 0; device < max_devices; ++device) {
    auto const t     = c.totals(device);
    auto const stats = stacks.statistics(device);
    if (t.allocations == 0 && t.failures == 0 && !stats) { continue; }
    auto const waiting        = pending.pending_bytes(device);
    auto const kept           = thread_cache::kept_bytes(device);
    auto const through_epochs = pending.frees_through_epochs(device);
    auto const streams        = pending.non_blocking_streams_created(device);
    auto const waits          = pending.waits(device);
    auto const epochs         = pending.epochs(device);
    auto const waited_ms      = static_cast<double>(waits.ns) / 1e6;
    // Scaled up from the sampled calls.
    auto const per_call_ns =
      t.timed_calls == 0 ? 0.0 : static_cast<double>(t.timed_ns) / static_cast<double>(t.timed_calls);
    auto const total_ms = per_call_ns * static_cast<double>(t.allocations + t.frees) / 1e6;
    if (json) {
      devices_json += fmt::format(
        R"({}{{"device":{},"allocations":{},"allocated_bytes":{},"kept_block_reuses":{},"kept_bytes":{},"frees":{},)"
        R"("freed_bytes":{},"failures":{},)"
        R"("live_bytes":{},"peak_live_bytes":{},"reserved_bytes":{},"peak_reserved_bytes":{},"free_bytes":{},"free_blocks":{},)"
        R"("largest_free_block":{},"fragmentation":{:.4f},"waiting_bytes":{},"frees_through_epochs":{},)"
        R"("non_blocking_streams_created":{},"fenced_epochs":{},"waited_epochs":{},"device_waits":{},"device_wait_ms":{:.3f},)"
        R"("resets":{},"reset_blocks":{},"reset_bytes":{},"ns_per_call":{:.1f}}})",
        devices_json.empty() ? "" : ",", device, t.allocations, t.allocated_bytes, t.kept_reuses, kept, t.frees,
        t.freed_bytes, t.failures, t.live_bytes, t.peak_live_bytes, stats ? stats->reserved_bytes : 0,
        stats ? stats->peak_reserved_bytes : 0, stats ? stats->free_bytes : 0, stats ? stats->free_blocks : 0,
        stats ? stats->largest_free_block : 0, stats ? stats->fragmentation() : 0.0, waiting, through_epochs, streams,
        epochs.fenced, epochs.waited, waits.count, waited_ms, t.resets, t.reset_blocks, t.reset_bytes, per_call_ns);
    } else {
      text += fmt::format("  device {}: {} allocations served ({}), {} frees, {} failed\n", device, t.allocations,
                          format_bytes(t.allocated_bytes), t.frees, t.failures);
      text += fmt::format("    allocations given the block their thread freed last: {} ({} kept now)\n", t.kept_reuses,
                          format_bytes(kept));
      text += fmt::format("    live {} (peak {}), waiting to be reusable {}\n", format_bytes(t.live_bytes),
                          format_bytes(t.peak_live_bytes), format_bytes(waiting));
      if (t.resets > 0) {
        text += fmt::format("    device resets: {} (they destroyed {} live block{}, {})\n", t.resets, t.reset_blocks,
                            t.reset_blocks == 1 ? "" : "s", format_bytes(t.reset_bytes));
      }
      text += fmt::format("    frees through epochs: {} of {} ({} non-blocking stream{} created)\n", through_epochs,
                          t.frees, streams, streams == 1 ? "" : "s");
      if (through_epochs > 0) {
        text += fmt::format(
          "    epochs reused at once behind a stream fence: {}, waited for: {}; the host waited for the device {} "
          "time{} ({:.2f} ms)\n",
          epochs.fenced, epochs.waited, waits.count, waits.count == 1 ? "" : "s", waited_ms);
      }
      if (stats) {
        text += fmt::format(
          "    the stack holds {} from the device (peak {}): {} free in {} blocks, largest {} "
          "(fragmentation {:.1f}%)\n",
          format_bytes(stats->reserved_bytes), format_bytes(stats->peak_reserved_bytes),
          format_bytes(stats->free_bytes), stats->free_blocks, format_bytes(stats->largest_free_block),
          100.0 * stats->fragmentation());
      }
      text += fmt::format("    time in the shim: {:.2f} ms, {:.0f} ns per call (1 call in {} timed)\n", total_ms,
                          per_call_ns, counters::time_sample_rate);
    }
  }
  std::string passes_text;
  std::string passes_json;
  for (std::size_t r = 0; r < static_cast<std::size_t>(pass_reason::count); ++r) {
    auto const reason = static_cast<pass_reason>(r);
    auto const n      = c.passes(reason);
    passes_json += fmt::format(R"({}"{}":{})", passes_json.empty() ? "" : ",", json_name(reason), n);
    if (n != 0) { passes_text += fmt::format("{}{} {}", passes_text.empty() ? "" : ", ", n, to_string(reason)); }
  }
  std::string hooks_text;
  std::string hooks_json;
  for (auto const& entry : wrapped_entry_points()) {
    auto const by_dlsym   = times_installed(entry, found_through::dlsym);
    auto const by_resolve = times_installed(entry, found_through::get_proc_address);
    if (by_dlsym + by_resolve == 0 || entry.exported_name.empty()) { continue; }
    hooks_json += fmt::format(R"({}{{"entry":"{}","dlsym":{},"cuGetProcAddress":{}}})", hooks_json.empty() ? "" : ",",
                              entry.exported_name, by_dlsym, by_resolve);
    hooks_text += fmt::format("{}{} ({}x dlsym, {}x cuGetProcAddress)", hooks_text.empty() ? "" : ", ",
                              entry.exported_name, by_dlsym, by_resolve);
  }
  std::string report;
  if (json) {
    report = fmt::format(R"({{"pid":{},"devices":[{}],"passed_through":{{{}}},"hooks":[{}]}})"
                         "\n",
                         ::getpid(), devices_json, passes_json, hooks_json);
  } else {
    report =
      fmt::format("rmm shim report (process {})\n{}", ::getpid(), text.empty() ? "  no device memory served\n" : text);
    report += fmt::format("  passed through: {}\n", passes_text.empty() ? "none" : passes_text);
    report += fmt::format("  wrappers handed out: {}\n", hooks_text.empty() ? "none" : hooks_text);
  }
  // Every byte reached the file, or the reason it did not (a full disk fails at the flush).
  errno = 0;
  if (std::fwrite(report.data(), 1, report.size(), out) != report.size() || std::fflush(out) != 0 ||
      std::ferror(out) != 0) {
    return errno != 0 ? errno : EIO;
  }
  return 0;
}

int save_report(std::string const& path,
                counters const& c,
                device_stacks const& stacks,
                deferred_frees const& pending) noexcept
{
  try {
    // A device or a pipe (/dev/stderr, /dev/full) is written as it is.
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
      std::FILE* out = std::fopen(path.c_str(), "w");
      if (out == nullptr) { return errno != 0 ? errno : EIO; }
      int error = write_report(out, true, c, stacks, pending);
      if (std::fclose(out) != 0 && error == 0) { error = errno != 0 ? errno : EIO; }
      return error;
    }
    // A file is written beside it and renamed over it: a reader never sees half a report, and a
    // failed write leaves no file that is not JSON.
    auto const partial = fmt::format("{}.partial.{}", path, ::getpid());
    std::FILE* out     = std::fopen(partial.c_str(), "w");
    if (out == nullptr) { return errno != 0 ? errno : EIO; }
    int error = write_report(out, true, c, stacks, pending);
    if (std::fclose(out) != 0 && error == 0) { error = errno != 0 ? errno : EIO; }
    if (error == 0 && std::rename(partial.c_str(), path.c_str()) != 0) { error = errno != 0 ? errno : EIO; }
    if (error != 0) { (void)std::remove(partial.c_str()); }
    return error;
  } catch (std::exception const&) {
    return ENOMEM;
  }
}

}  // namespace rmm::shim
