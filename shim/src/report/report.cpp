// SPDX-License-Identifier: Apache-2.0
#include "report/report.hpp"

#include "frees/deferred_frees.hpp"
#include "stacks/device_stacks.hpp"
#include "stacks/physical_cache.hpp"
#include "stacks/process_pause.hpp"
#include "stacks/regions.hpp"
#include "frees/program_streams.hpp"
#include "settings.hpp"
#include "driver/hook_table.hpp"
#include "stacks/thread_cache.hpp"
#include "stacks/thread_records.hpp"

#include "detail/json_writer.hpp"

#include <rmm/format_bytes.hpp>
#include <rmm/mr/suballocator_statistics.hpp>

#include <fmt/format.h>

#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <mutex>
#include <optional>
#include <string_view>
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

void counters::served_allocation(int device, std::size_t bytes, block_source source) noexcept
{
  add(device, allocations, 1, allocated_bytes, bytes, source == block_source::kept ? kept_reuses : fields, 1);
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

void counters::passed_by(pass_reason reason, std::size_t bytes) noexcept
{
  passed(reason);
  passed_bytes_[static_cast<std::size_t>(reason)].fetch_add(bytes, std::memory_order_relaxed);
}

void counters::physical_allocation_call(physical_call call, std::uint64_t nanoseconds) noexcept
{
  physical_calls_[static_cast<std::size_t>(call)].fetch_add(1, std::memory_order_relaxed);
  physical_ns_.fetch_add(nanoseconds, std::memory_order_relaxed);
}

counters::physical_calls counters::physical_allocation_calls() const noexcept
{
  return {physical_calls_[static_cast<std::size_t>(physical_call::create)].load(std::memory_order_relaxed),
          physical_calls_[static_cast<std::size_t>(physical_call::release)].load(std::memory_order_relaxed),
          physical_ns_.load(std::memory_order_relaxed)};
}

std::uint64_t counters::passed_bytes(pass_reason reason) const noexcept
{
  return passed_bytes_[static_cast<std::size_t>(reason)].load(std::memory_order_relaxed);
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

namespace {

/// What the report says of one device, read once.
struct device_report {
  int device{};
  counters::device_totals totals{};
  std::optional<rmm::mr::suballocator_statistics> stack;  ///< unset when no stack was built
  std::size_t kept_bytes{};                               ///< held by threads for their next allocation
  std::size_t waiting_bytes{};                            ///< freed, waiting for the device to finish with them
  std::size_t frees_through_epochs{};
  std::size_t non_blocking_streams_created{};
  deferred_frees::epoch_counts epochs{};
  deferred_frees::device_waits waits{};
  program_streams::fence_counts fences{};  ///< for the watched non-blocking streams
  std::optional<graph_memory> graphs;      ///< the driver's memory for CUDA graphs, when asked

  /// Per call, from the sampled calls.
  [[nodiscard]] double ns_per_call() const noexcept
  {
    return totals.timed_calls == 0 ? 0.0
                                   : static_cast<double>(totals.timed_ns) / static_cast<double>(totals.timed_calls);
  }
  /// In all, scaled up from the sampled calls.
  [[nodiscard]] double ms_in_shim() const noexcept
  {
    return ns_per_call() * static_cast<double>(totals.allocations + totals.frees) / 1e6;
  }
  [[nodiscard]] double waited_ms() const noexcept { return static_cast<double>(waits.ns) / 1e6; }
};

/// A wrapper the program was handed, and how often by each way of finding it.
struct hook_report {
  std::string_view entry;
  std::uint64_t by_dlsym{};
  std::uint64_t by_get_proc_address{};
};

/// Whether the process loaded XLA (jaxlib's extension or its CUDA plugin, TensorFlow), whose
/// allocators have a mode the shim serves.
bool xla_loaded() noexcept
{
  auto const visit = [](dl_phdr_info* info, std::size_t, void*) -> int {
    std::string_view const name{info->dlpi_name != nullptr ? info->dlpi_name : ""};
    for (auto const* mark : {"xla_extension", "jaxlib", "xla_cuda", "libtensorflow"}) {
      if (name.find(mark) != std::string_view::npos) { return 1; }
    }
    return 0;
  };
  return ::dl_iterate_phdr(visit, nullptr) != 0;
}

/// A tag's memory (regions.hpp), summed over the devices.
struct tag_report {
  region_table::tag_status status;
  std::size_t live_bytes{};      ///< in its blocks (the sub-allocators' count)
  std::size_t reserved_bytes{};  ///< mapped now: none while it is paused
};

/// Everything the report says, gathered before any of it is written.
struct report_contents {
  long pid{};
  std::vector<device_report> devices;                 ///< those that served, failed or built a stack
  std::array<std::uint64_t, reasons> passes{};        ///< indexed by pass_reason
  std::array<std::uint64_t, reasons> passed_bytes{};  ///< of the allocations passed by, by reason
  bool xla_loaded{};                                  ///< the process runs XLA (JAX, TensorFlow)
  counters::physical_calls physical{};                ///< the program's own cuMemCreate / cuMemRelease
  physical_cache::statistics kept_physical{};         ///< those the physical cache answered
  std::vector<hook_report> hooks;                     ///< wrappers handed out at least once
  bool streams_watched{};                             ///< the non-blocking streams' work was seen
  std::string streams_unwatched_because;              ///< why not, when it was not
  process_pause::summary pause{};                     ///< the pause of the device memory
  std::size_t kept_host_bytes{};                      ///< host memory kept for the next pause
  bool kept_host_held{};                              ///< held, else given back lazily
  std::size_t staging_host_bytes{};                   ///< page-locked, for the pause's copies
  std::vector<tag_report> tags;                       ///< the tags regions named
};

report_contents collect_report(report_sources const& sources)
{
  auto const& c       = sources.count;
  auto const& stacks  = sources.stacks;
  auto const& pending = sources.pending;
  auto const& streams = sources.streams;
  report_contents report;
  report.pid = static_cast<long>(::getpid());
  for (int device = 0; device < max_devices; ++device) {
    auto const totals = c.totals(device);
    auto stack        = stacks.statistics(device);
    if (totals.allocations == 0 && totals.failures == 0 && !stack) { continue; }
    report.devices.push_back({.device                       = device,
                              .totals                       = totals,
                              .stack                        = stack,
                              .kept_bytes                   = thread_cache::kept_bytes(device),
                              .waiting_bytes                = pending.pending_bytes(device),
                              .frees_through_epochs         = pending.frees_through_epochs(device),
                              .non_blocking_streams_created = streams.created_count(device),
                              .epochs                       = pending.epochs(device),
                              .waits                        = pending.waits(device),
                              .fences                       = streams.fences(device),
                              .graphs                       = sources.graphs[static_cast<std::size_t>(device)]});
  }
  for (std::size_t r = 0; r < reasons; ++r) {
    report.passes[r]       = c.passes(static_cast<pass_reason>(r));
    report.passed_bytes[r] = c.passed_bytes(static_cast<pass_reason>(r));
  }
  report.xla_loaded                = xla_loaded();
  report.physical                  = c.physical_allocation_calls();
  report.kept_physical             = sources.physical.stats();
  report.streams_watched           = streams.watching();
  report.streams_unwatched_because = streams.why_not_watching();
  report.pause                     = sources.pause.status();
  for (int device = 0; device < max_devices; ++device) {
    report.kept_host_bytes += stacks.kept_host_bytes(device);
    report.staging_host_bytes += stacks.staging_host_bytes(device);
  }
  report.kept_host_held = settings().pause_keeps_host_memory;
  for (std::size_t r = 1; r <= sources.regions.count(); ++r) {
    auto const region = static_cast<region_id>(r);
    tag_report tag{sources.regions.status(region)};
    tag.status.paused = tag.status.paused || report.pause.paused;
    for (int device = 0; device < max_devices; ++device) {
      if (auto const stats = stacks.statistics(device, region)) {
        tag.live_bytes += stats->allocated_bytes;
        tag.reserved_bytes += stats->reserved_bytes;
      }
    }
    report.tags.push_back(std::move(tag));
  }
  for (auto const& entry : wrapped_entry_points()) {
    auto const by_dlsym   = times_installed(entry, found_through::dlsym);
    auto const by_resolve = times_installed(entry, found_through::get_proc_address);
    if (by_dlsym + by_resolve == 0 || entry.exported_name.empty()) { continue; }
    report.hooks.push_back({entry.exported_name, by_dlsym, by_resolve});
  }
  return report;
}

char const* plural(std::uint64_t n) noexcept { return n == 1 ? "" : "s"; }

/// What a program that maps its own memory can do instead, when that program is XLA's.
std::string text_virtual_memory_hint(report_contents const& report)
{
  auto const r = static_cast<std::size_t>(pass_reason::virtual_memory);
  if (report.passes[r] == 0 || !report.xla_loaded) { return {}; }
  return fmt::format(
    "  XLA mapped {} of physical memory itself in {} allocation{} (its default or platform allocator): with "
    "XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async and XLA_PYTHON_CLIENT_PREALLOCATE=false the shim serves them\n",
    rmm::format_bytes(report.passed_bytes[r]), report.passes[r], plural(report.passes[r]));
}

/// What the program's own physical allocations cost, and how many of them the cache answered.
std::string text_physical_allocations(report_contents const& report)
{
  auto const& p = report.physical;
  if (p.creates + p.releases == 0) { return {}; }
  auto const& c = report.kept_physical;
  return fmt::format(
    "  physical memory the program mapped itself: {} cuMemCreate ({} from released allocations kept for it), {} "
    "cuMemRelease, {:.2f} ms in the driver's; {} kept now (at most {})\n",
    p.creates, c.hits, p.releases, static_cast<double>(p.ns) / 1e6, rmm::format_bytes(c.cached_bytes),
    rmm::format_bytes(c.peak_cached_bytes));
}

/// "device 0: 205 allocations served (4.02 MiB), 205 frees, 0 failed" and the peaks under it.
std::string text_headline(device_report const& d)
{
  using rmm::format_bytes;
  auto const& t = d.totals;
  auto text     = fmt::format("  device {}: {} allocations served ({}), {} frees, {} failed\n", d.device, t.allocations,
                              format_bytes(t.allocated_bytes), t.frees, t.failures);
  if (d.stack) {
    text += fmt::format("    peak reserved {}, peak live {}, fragmentation {:.1f}%\n",
                        format_bytes(d.stack->peak_reserved_bytes), format_bytes(t.peak_live_bytes),
                        100.0 * d.stack->fragmentation());
  } else {
    text += fmt::format("    peak live {} (no stack built)\n", format_bytes(t.peak_live_bytes));
  }
  return text;
}

/// "passed through: 4 not the shim's memory, 2 null or empty", or "none".
std::string text_passes(report_contents const& report)
{
  std::string list;
  for (std::size_t r = 0; r < reasons; ++r) {
    if (auto const n = report.passes[r]; n != 0) {
      list += fmt::format("{}{} {}", list.empty() ? "" : ", ", n, to_string(static_cast<pass_reason>(r)));
    }
  }
  return fmt::format("  passed through: {}\n", list.empty() ? "none" : list);
}

/// The rest of a device's figures: what is live and waiting, kept blocks, epochs, resets, time.
std::string text_details(device_report const& d)
{
  using rmm::format_bytes;
  auto const& t = d.totals;
  auto text     = fmt::format("  device {} in detail:\n", d.device);
  text += fmt::format("    live {} now, waiting to be reusable {}\n", format_bytes(t.live_bytes),
                      format_bytes(d.waiting_bytes));
  if (d.stack) {
    text += fmt::format("    the stack holds {} from the device: {} free in {} block{}, largest {}\n",
                        format_bytes(d.stack->reserved_bytes), format_bytes(d.stack->free_bytes), d.stack->free_blocks,
                        plural(d.stack->free_blocks), format_bytes(d.stack->largest_free_block));
    if (d.stack->moved_bytes > 0) {
      text += fmt::format("    idle free memory moved to the end of the pool instead of mapping more: {}\n",
                          format_bytes(d.stack->moved_bytes));
    }
  }
  if (d.graphs && d.graphs->reserved_bytes > 0) {
    text += fmt::format(
      "    CUDA graphs' own memory (the driver's, outside the stack): {} mapped, {} in allocations not freed\n",
      format_bytes(d.graphs->reserved_bytes), format_bytes(d.graphs->used_bytes));
  }
  text += fmt::format("    allocations given the block their thread freed last: {} ({} kept now)\n", t.kept_reuses,
                      format_bytes(d.kept_bytes));
  text += fmt::format("    frees through epochs: {} of {} ({} non-blocking stream{} created)\n", d.frees_through_epochs,
                      t.frees, d.non_blocking_streams_created, plural(d.non_blocking_streams_created));
  if (d.frees_through_epochs > 0) {
    text += fmt::format(
      "    epochs reused at once behind a stream fence: {}, waited for: {}; the host waited for the device {} "
      "time{} ({:.2f} ms)\n",
      d.epochs.fenced, d.epochs.waited, d.waits.count, plural(d.waits.count), d.waited_ms());
  }
  if (d.non_blocking_streams_created > 0 && (d.fences.recorded > 0 || d.fences.waited > 0)) {
    text += fmt::format("    non-blocking streams fenced behind legacy-order reuse: {} fence{} recorded, {} wait{}\n",
                        d.fences.recorded, plural(d.fences.recorded), d.fences.waited, plural(d.fences.waited));
  }
  if (t.resets > 0) {
    text += fmt::format("    device resets: {} (they destroyed {} live block{}, {})\n", t.resets, t.reset_blocks,
                        plural(t.reset_blocks), format_bytes(t.reset_bytes));
  }
  text += fmt::format("    time in the shim: {:.2f} ms, {:.0f} ns per call (1 call in {} timed)\n", d.ms_in_shim(),
                      d.ns_per_call(), counters::time_sample_rate);
  return text;
}

std::string text_hooks(report_contents const& report)
{
  std::string list;
  for (auto const& hook : report.hooks) {
    list += fmt::format("{}{} ({}x dlsym, {}x cuGetProcAddress)", list.empty() ? "" : ", ", hook.entry, hook.by_dlsym,
                        hook.by_get_proc_address);
  }
  return fmt::format("  wrappers handed out: {}\n", list.empty() ? "none" : list);
}

/// The pause of the device memory, when there was one.
std::string text_pause(report_contents const& report)
{
  auto const& p = report.pause;
  if (p.pauses == 0) { return {}; }
  auto text = fmt::format(
    "  {}: {} pause{}; the last gave back {} of device memory and kept {} of contents in host memory{} in {:.0f} ms",
    p.paused ? "PAUSED" : "paused before", p.pauses, plural(p.pauses), rmm::format_bytes(p.device_bytes),
    rmm::format_bytes(p.saved_bytes), p.staged ? "" : " (copied without page-locked staging)", p.pause_ms);
  if (!p.paused) { text += fmt::format(", resumed in {:.0f} ms", p.resume_ms); }
  if (report.kept_host_bytes > 0) {
    text += fmt::format("; {} of host memory kept for the next pause{}", rmm::format_bytes(report.kept_host_bytes),
                        report.kept_host_held ? "" : " until the system needs it");
  }
  if (report.staging_host_bytes > 0) {
    text += fmt::format("; {} of page-locked host memory held to stage the copies",
                        rmm::format_bytes(report.staging_host_bytes));
  }
  if (p.fault_device >= 0) {
    text += fmt::format(
      "; the CUDA context of device {} FAILED while paused ({}): a kernel most likely touched "
      "paused memory",
      p.fault_device, p.fault_error);
  }
  text +=
    fmt::format("; {} allocation{} waited for a resume ({} timed out), {} free{} held now\n", p.waited_allocations,
                plural(p.waited_allocations), p.timed_out_allocations, p.held_frees, plural(p.held_frees));
  return text;
}

/// The tags regions named: what each holds, and its pauses.
std::string text_tags(report_contents const& report)
{
  std::string text;
  for (auto const& t : report.tags) {
    auto const& st = t.status;
    text += fmt::format("  tag '{}': {} live, {} mapped", st.name, rmm::format_bytes(t.live_bytes),
                        rmm::format_bytes(t.reserved_bytes));
    if (st.pauses > 0) {
      text += fmt::format("; {}: {} pause{}, the last gave back {} and {}", st.paused ? "PAUSED" : "paused before",
                          st.pauses, plural(st.pauses), rmm::format_bytes(st.device_bytes),
                          st.discarded
                            ? std::string{"discarded the contents"}
                            : fmt::format("kept {} of contents in host memory", rmm::format_bytes(st.saved_bytes)));
    }
    if (st.held_frees > 0) {
      text += fmt::format("; {} free{} held for its resume", st.held_frees, plural(st.held_frees));
    }
    text += fmt::format("{}\n", st.discards ? " (a pause discards it)" : "");
  }
  return text;
}

/// For people: what was served and the peaks first, what passed the shim by, then the details.
std::string text_report(report_contents const& report, report_detail detail)
{
  auto text = fmt::format("rmm shim report (process {})\n", report.pid);
  if (report.devices.empty()) { text += "  no device memory served\n"; }
  for (auto const& d : report.devices) { text += text_headline(d); }
  text += text_passes(report);
  text += text_virtual_memory_hint(report);
  text += text_physical_allocations(report);
  for (auto const& d : report.devices) { text += text_details(d); }
  text += text_pause(report);
  text += text_tags(report);
  if (!report.streams_watched && !report.streams_unwatched_because.empty() &&
      std::any_of(report.devices.begin(), report.devices.end(),
                  [](device_report const& d) { return d.non_blocking_streams_created > 0; })) {
    text += fmt::format("  non-blocking streams not watched: {}; every epoch queried and fenced them all\n",
                        report.streams_unwatched_because);
  }
  if (detail == report_detail::verbose) { text += text_hooks(report); }
  return text;
}

void json_device(rmm::detail::json_writer& json, device_report const& d)
{
  auto const& t     = d.totals;
  auto const& stack = d.stack.value_or(rmm::mr::suballocator_statistics{});
  json.begin_object()
    .member("device", d.device)
    .member("allocations", t.allocations)
    .member("allocated_bytes", t.allocated_bytes)
    .member("kept_block_reuses", t.kept_reuses)
    .member("kept_bytes", d.kept_bytes)
    .member("frees", t.frees)
    .member("freed_bytes", t.freed_bytes)
    .member("failures", t.failures)
    .member("live_bytes", t.live_bytes)
    .member("peak_live_bytes", t.peak_live_bytes)
    .member("reserved_bytes", stack.reserved_bytes)
    .member("peak_reserved_bytes", stack.peak_reserved_bytes)
    .member("free_bytes", stack.free_bytes)
    .member("free_blocks", stack.free_blocks)
    .member("largest_free_block", stack.largest_free_block)
    .member("fragmentation", stack.fragmentation(), 4)
    .member("moved_bytes", stack.moved_bytes)
    .member("waiting_bytes", d.waiting_bytes)
    .member("frees_through_epochs", d.frees_through_epochs)
    .member("non_blocking_streams_created", d.non_blocking_streams_created)
    .member("fenced_epochs", d.epochs.fenced)
    .member("waited_epochs", d.epochs.waited)
    .member("stream_fences_recorded", d.fences.recorded)
    .member("stream_fence_waits", d.fences.waited)
    .member("device_waits", d.waits.count)
    .member("device_wait_ms", d.waited_ms(), 3)
    .member("resets", t.resets)
    .member("reset_blocks", t.reset_blocks)
    .member("reset_bytes", t.reset_bytes)
    .member("ns_per_call", d.ns_per_call(), 1)
    .member("graph_reserved_bytes", d.graphs ? std::optional{d.graphs->reserved_bytes} : std::nullopt)
    .member("graph_used_bytes", d.graphs ? std::optional{d.graphs->used_bytes} : std::nullopt)
    .end_object();
}

/// The pause of the whole process, and a fault seen while paused.
void json_pause(rmm::detail::json_writer& json, report_contents const& report)
{
  json.key("pause")
    .begin_object()
    .key("paused")
    .boolean(report.pause.paused)
    .member("pauses", report.pause.pauses)
    .member("device_bytes", report.pause.device_bytes)
    .member("saved_bytes", report.pause.saved_bytes)
    .key("staged")
    .boolean(report.pause.staged)
    .member("pause_ms", report.pause.pause_ms, 1)
    .member("resume_ms", report.pause.resume_ms, 1)
    .member("kept_host_bytes", report.kept_host_bytes)
    .key("kept_host_held")
    .boolean(report.kept_host_held)
    .member("staging_host_bytes", report.staging_host_bytes)
    .member("held_frees", report.pause.held_frees)
    .member("waited_allocations", report.pause.waited_allocations)
    .member("timed_out_allocations", report.pause.timed_out_allocations)
    .key("fault");
  if (report.pause.fault_device < 0) {
    json.null();
  } else {
    json.begin_object()
      .member("device", report.pause.fault_device)
      .member("error", report.pause.fault_error)
      .end_object();
  }
  json.end_object();
}

/// Each tag a region named: what it holds and its pauses.
void json_tags(rmm::detail::json_writer& json, std::vector<tag_report> const& tags)
{
  json.key("tags").begin_array();
  for (auto const& t : tags) {
    json.begin_object()
      .member("tag", t.status.name)
      .member("live_bytes", t.live_bytes)
      .member("reserved_bytes", t.reserved_bytes)
      .key("paused")
      .boolean(t.status.paused)
      .key("discards")
      .boolean(t.status.discards)
      .member("pauses", t.status.pauses)
      .member("device_bytes", t.status.device_bytes)
      .member("saved_bytes", t.status.saved_bytes)
      .key("discarded")
      .boolean(t.status.discarded)
      .member("held_frees", t.status.held_frees)
      .end_object();
  }
  json.end_array();
}

/// For programs: one line of JSON, every figure of every device, every reason, every wrapper.
std::string json_report(report_contents const& report)
{
  rmm::detail::json_writer json;
  json.begin_object().member("pid", report.pid).key("devices").begin_array();
  for (auto const& d : report.devices) { json_device(json, d); }
  json.end_array().key("passed_through").begin_object();
  for (std::size_t r = 0; r < reasons; ++r) { json.member(json_name(static_cast<pass_reason>(r)), report.passes[r]); }
  json.end_object().key("passed_by_bytes").begin_object();
  for (auto const reason : {pass_reason::program_pool, pass_reason::managed, pass_reason::virtual_memory}) {
    json.member(json_name(reason), report.passed_bytes[static_cast<std::size_t>(reason)]);
  }
  json.end_object()
    .key("physical_allocations")
    .begin_object()
    .member("creates", report.physical.creates)
    .member("releases", report.physical.releases)
    .member("ns", report.physical.ns)
    .member("cache_hits", report.kept_physical.hits)
    .member("cached_bytes", report.kept_physical.cached_bytes)
    .member("peak_cached_bytes", report.kept_physical.peak_cached_bytes)
    .end_object()
    .key("streams_watched")
    .boolean(report.streams_watched)
    .member("streams_unwatched_because", report.streams_unwatched_because);
  json_pause(json, report);
  json_tags(json, report.tags);
  json.key("hooks").begin_array();
  for (auto const& hook : report.hooks) {
    json.begin_object()
      .member("entry", hook.entry)
      .member("dlsym", hook.by_dlsym)
      .member("cuGetProcAddress", hook.by_get_proc_address)
      .end_object();
  }
  json.end_array().end_object();
  return json.take() + "\n";
}

}  // namespace

std::string render_report(report_format format, report_detail detail, report_sources const& sources)
{
  auto const contents = collect_report(sources);
  return format == report_format::json ? json_report(contents) : text_report(contents, detail);
}

int write_report(std::FILE* out, report_format format, report_detail detail, report_sources const& sources)
{
  auto const report = render_report(format, detail, sources);
  // Every byte reached the file, or the reason it did not (a full disk fails at the flush).
  errno = 0;
  if (std::fwrite(report.data(), 1, report.size(), out) != report.size() || std::fflush(out) != 0 ||
      std::ferror(out) != 0) {
    return errno != 0 ? errno : EIO;
  }
  return 0;
}

int save_report(std::string const& path, report_sources const& sources) noexcept
{
  try {
    // A device or a pipe (/dev/stderr, /dev/full) is written as it is.
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
      std::FILE* out = std::fopen(path.c_str(), "w");
      if (out == nullptr) { return errno != 0 ? errno : EIO; }
      int error = write_report(out, report_format::json, report_detail::verbose, sources);
      if (std::fclose(out) != 0 && error == 0) { error = errno != 0 ? errno : EIO; }
      return error;
    }
    // A file is written beside it and renamed over it: a reader never sees half a report, and a
    // failed write leaves no file that is not JSON.
    auto const partial = fmt::format("{}.partial.{}", path, ::getpid());
    std::FILE* out     = std::fopen(partial.c_str(), "w");
    if (out == nullptr) { return errno != 0 ? errno : EIO; }
    int error = write_report(out, report_format::json, report_detail::verbose, sources);
    if (std::fclose(out) != 0 && error == 0) { error = errno != 0 ? errno : EIO; }
    if (error == 0 && std::rename(partial.c_str(), path.c_str()) != 0) { error = errno != 0 ? errno : EIO; }
    if (error != 0) { (void)std::remove(partial.c_str()); }
    return error;
  } catch (std::exception const&) {
    return ENOMEM;
  }
}

}  // namespace rmm::shim
