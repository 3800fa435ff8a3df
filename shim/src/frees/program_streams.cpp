// SPDX-License-Identifier: Apache-2.0
#include "frees/program_streams.hpp"

#include "driver/contexts.hpp"
#include "driver/real_driver.hpp"
#include "process_exit.hpp"

#include <algorithm>

namespace rmm::shim {

namespace {

/// Handles below this are the default streams (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD).
constexpr std::uintptr_t first_program_stream = 3;

/// A query that does not say "not ready" means the stream is done: an error other than that means
/// the context is broken, and nothing will run on it any more.
bool finished(CUresult query) noexcept { return query != CUDA_ERROR_NOT_READY; }

}  // namespace

program_streams::program_streams()
{
  live_.reserve(64);
  spare_.reserve(64);
}

void program_streams::lose_sight(std::string why) noexcept
{
  if (!watching_.exchange(false, std::memory_order_seq_cst)) { return; }
  try {
    std::lock_guard lock{why_mutex_};
    why_not_ = std::move(why);
  } catch (...) {  // the reason is for the report only
  }
  // Work the shim will not see may come to any stream now: each one that still owes a fence gets
  // it at once, and the epochs fence them all from now on.
  if (exiting()) { return; }
  std::lock_guard lock{mutex_};
  for (auto* w : live_) {
    auto& d = devices_[static_cast<std::size_t>(w->device)];
    if (w->fenced_at.load(std::memory_order_acquire) < d.generation.load(std::memory_order_acquire)) { fence(*w, d); }
  }
}

std::string program_streams::why_not_watching() const
{
  std::lock_guard lock{why_mutex_};
  return why_not_;
}

void program_streams::never_watch() noexcept { lose_sight("turned off ([shim] watch_streams = false)"); }

std::size_t program_streams::bucket_of(CUstream stream) noexcept
{
  // Handles are addresses of the driver's stream objects: mix the bits that vary.
  auto const bits = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(stream)) * 0x9E3779B97F4A7C15ULL;
  return static_cast<std::size_t>(bits >> 54) % buckets;  // the top 10 bits
}

program_streams::watched* program_streams::lookup(CUstream stream) noexcept
{
  auto const first = bucket_of(stream) * bucket_size;
  for (std::size_t i = first; i < first + bucket_size; ++i) {
    if (keys_[i].load(std::memory_order_acquire) == stream) { return entries_[i]; }
  }
  return nullptr;
}

program_streams::watched* program_streams::find(CUstream stream) noexcept
{
  if (reinterpret_cast<std::uintptr_t>(stream) < first_program_stream) { return nullptr; }
  if (live_count_.load(std::memory_order_acquire) == 0) { return nullptr; }
  return lookup(stream);  // also while nothing is watched: a fence still owed is still given
}

bool program_streams::is_watched(CUstream stream) noexcept
{
  return std::any_of(live_.begin(), live_.end(),
                     [stream](watched const* w) { return w->handle.load(std::memory_order_relaxed) == stream; });
}

void program_streams::created(CUstream stream, unsigned int flags, int device) noexcept
{
  if ((flags & CU_STREAM_NON_BLOCKING) == 0) { return; }  // blocking: the legacy stream's event covers it
  if (!has_device_slot(device)) { return; }
  auto& d = devices_[static_cast<std::size_t>(device)];
  // Counted before the fence is recorded: an allocation that saw no non-blocking stream either
  // took its block before the fence (which then covers the block's earlier work) or sees the count
  // when it checks again (dispatch.cpp).
  d.non_blocking.fetch_add(1, std::memory_order_seq_cst);
  d.created.fetch_add(1, std::memory_order_relaxed);
  bool const capture_in_progress = capturing();
  // Blocks handed out in the legacy stream's order may still be used by work queued before this
  // stream existed; the stream does not take part in the legacy stream's synchronization. While a
  // capture is in progress nothing may touch the legacy stream: no fence now (docs/shim.md); a
  // watched stream then gets its fence before its first work.
  auto const covered = d.generation.load(std::memory_order_seq_cst);
  if (!capture_in_progress) {
    auto const* driver = real();
    CUevent fence{};
    bool fenced = driver->event_create(&fence, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS;
    if (fenced) {
      fenced = driver->event_record(fence, CU_STREAM_LEGACY) == CUDA_SUCCESS &&
               driver->stream_wait_event(stream, fence, 0) == CUDA_SUCCESS;
      (void)driver->event_destroy(fence);  // the wait keeps what it needs
    }
    if (!fenced) { (void)driver->ctx_synchronize(); }  // no event to fence with: wait instead
  }
  bool listed = false;
  try {
    listed = watch(stream, device, capture_in_progress ? 0 : covered);
  } catch (...) {  // out of host memory for its record: the stream cannot be watched
  }
  if (!listed) { lose_sight("more non-blocking streams alive than the shim's table holds, or no memory for one"); }
}

bool program_streams::watch(CUstream stream, int device, std::uint64_t fenced_at)
{
  std::lock_guard lock{mutex_};
  watched* w = nullptr;
  if (spare_.empty()) {
    w = new watched;  // kept for good: a hook may still read a record its stream left
  } else {
    w = spare_.back();
    spare_.pop_back();
  }
  w->device = device;
  w->submitted.store(0, std::memory_order_relaxed);
  w->idle_through = 0;
  w->fenced_at.store(fenced_at, std::memory_order_relaxed);
  w->handle.store(stream, std::memory_order_relaxed);
  try {
    live_.push_back(w);
  } catch (...) {  // out of host memory: the stream goes unwatched, as before the shim watched streams
    spare_.push_back(w);
    throw;
  }
  live_count_.store(live_.size(), std::memory_order_release);
  auto const first = bucket_of(stream) * bucket_size;
  for (std::size_t i = first; i < first + bucket_size; ++i) {
    if (keys_[i].load(std::memory_order_relaxed) == nullptr) {
      entries_[i] = w;
      keys_[i].store(stream, std::memory_order_release);
      return true;
    }
  }
  return false;  // kept in live_ (queried and fenced), but the hooks cannot find it
}

void program_streams::unlist(watched& w) noexcept
{
  auto const stream = w.handle.load(std::memory_order_relaxed);
  auto const first  = bucket_of(stream) * bucket_size;
  for (std::size_t i = first; i < first + bucket_size; ++i) {
    if (entries_[i] == &w && keys_[i].load(std::memory_order_relaxed) == stream) {
      keys_[i].store(nullptr, std::memory_order_release);
    }
  }
  std::erase(live_, &w);
  live_count_.store(live_.size(), std::memory_order_release);
  spare_.push_back(&w);  // never fails: spare_ holds at most every record there ever was
}

void program_streams::destroyed(CUstream stream) noexcept
{
  capture_checked(stream, 0, capture_state::over);  // a stream destroyed while capturing captures no more
  std::lock_guard lock{mutex_};
  auto const found = std::find_if(live_.begin(), live_.end(), [stream](watched const* w) {
    return w->handle.load(std::memory_order_relaxed) == stream;
  });
  if (found == live_.end()) { return; }
  auto& w           = **found;
  auto const device = w.device;
  bool const seen_idle =
    watching() && w.submitted.load(std::memory_order_acquire) == w.idle_through;  // nothing since it was idle
  unlist(w);
  auto const* driver = real();
  CUstreamCaptureStatus status{CU_STREAM_CAPTURE_STATUS_NONE};
  if (driver->stream_is_capturing(stream, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE) {
    // Not even asked: a query of a capturing stream ends its capture. Whatever the stream ran before
    // its capture may still run, and nothing can watch it: the stream counts for good.
    return;
  }
  if (!seen_idle && driver->stream_query(stream) == CUDA_ERROR_NOT_READY) {
    CUevent done{};
    if (driver->event_create(&done, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS) {
      if (driver->event_record(done, stream) == CUDA_SUCCESS) {
        try {
          draining_.push_back({done, device});
          draining_count_.store(static_cast<int>(draining_.size()), std::memory_order_release);
          return;
        } catch (...) {  // out of host memory: wait for the stream below
        }
      }
      (void)driver->event_destroy(done);
    }
    (void)driver->stream_synchronize(stream);  // nothing to watch it with: wait for it here
  }
  devices_[static_cast<std::size_t>(device)].non_blocking.fetch_sub(1, std::memory_order_seq_cst);
}

void program_streams::forget_device(int device) noexcept
{
  if (!has_device_slot(device)) { return; }
  auto& d = devices_[static_cast<std::size_t>(device)];
  std::lock_guard lock{mutex_};
  std::vector<watched*> gone;
  for (auto* w : live_) {
    if (w->device == device) { gone.push_back(w); }
  }
  for (auto* w : gone) { unlist(*w); }
  std::erase_if(draining_, [device](draining_stream const& s) { return s.device == device; });
  draining_count_.store(static_cast<int>(draining_.size()), std::memory_order_release);
  d.non_blocking.store(0, std::memory_order_seq_cst);
  d.idle_through.store(d.submissions.load(std::memory_order_acquire), std::memory_order_release);
  std::lock_guard fence_lock{d.fence_mutex};
  d.fence        = nullptr;  // went with the context
  d.fence_covers = 0;
}

std::size_t program_streams::created_count(int device) const noexcept
{
  if (!has_device_slot(device)) { return 0; }
  return devices_[static_cast<std::size_t>(device)].created.load(std::memory_order_relaxed);
}

bool program_streams::record_fence(int device, per_device& d) noexcept
{
  auto const generation = d.generation.load(std::memory_order_seq_cst);
  if (d.fence != nullptr && d.fence_covers >= generation) { return true; }
  auto const* driver = real();
  scoped_device_context const on_device{device};  // the legacy stream of the blocks' device
  if (d.fence == nullptr && driver->event_create(&d.fence, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    d.fence = nullptr;
    return false;
  }
  if (driver->event_record(d.fence, CU_STREAM_LEGACY) != CUDA_SUCCESS) { return false; }
  d.fence_covers = generation;
  d.fences_recorded.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void program_streams::before_submission(watched& w) noexcept
{
  auto& d = devices_[static_cast<std::size_t>(w.device)];
  if (w.fenced_at.load(std::memory_order_acquire) >= d.generation.load(std::memory_order_acquire)) [[likely]] {
    return;
  }
  fence(w, d);
}

void program_streams::fence(watched& w, per_device& d) noexcept
{
  if (exiting()) { return; }  // no CUDA call for the shim during exit
  auto const* driver = real();
  auto const stream  = w.handle.load(std::memory_order_relaxed);
  if (capturing()) {
    // Captured work does not run now; the graph's launch gets the fence. A capture also forbids a
    // wait for an event recorded outside it.
    CUstreamCaptureStatus status{CU_STREAM_CAPTURE_STATUS_NONE};
    if (driver->stream_is_capturing(stream, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE) {
      return;
    }
  }
  std::lock_guard lock{d.fence_mutex};
  // While a capture is in progress nothing is given back in the legacy order, and the fence was
  // recorded before the first capture began (capture_noted): it covers every block given back.
  bool const in_capture = capturing();
  bool const recorded   = in_capture ? d.fence != nullptr : record_fence(w.device, d);
  if (in_capture && !recorded) { return; }  // a stream created during a capture: no fence (docs/shim.md)
  if (recorded && driver->stream_wait_event(stream, d.fence, 0) == CUDA_SUCCESS) {
    w.fenced_at.store(d.fence_covers, std::memory_order_release);
    d.fences_waited.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // No event to order the stream with: the host waits for the legacy stream's work instead.
  scoped_device_context const on_device{w.device};
  auto const generation = d.generation.load(std::memory_order_seq_cst);
  if (driver->stream_synchronize(CU_STREAM_LEGACY) == CUDA_SUCCESS) {
    w.fenced_at.store(generation, std::memory_order_release);
  }
}

bool program_streams::idle(int device, ask_streams ask, std::vector<CUstream>* busy) noexcept
{
  auto& d = devices_[static_cast<std::size_t>(device)];
  if (!drained(device)) { return false; }
  bool const watch = watching();
  if (watch && d.submissions.load(std::memory_order_acquire) == d.idle_through.load(std::memory_order_acquire)) {
    return true;  // no work submitted since every stream was last found idle
  }
  if (watch && ask == ask_streams::never) { return false; }
  auto const* driver = real();
  std::lock_guard lock{mutex_};
  auto const total = d.submissions.load(std::memory_order_acquire);
  bool all_idle    = true;
  for (auto* w : live_) {
    if (w->device != device) { continue; }
    auto const submitted = w->submitted.load(std::memory_order_acquire);
    if (watch && submitted == w->idle_through) { continue; }
    auto const stream = w->handle.load(std::memory_order_relaxed);
    if (finished(driver->stream_query(stream))) {
      w->idle_through = submitted;  // what was counted before the query has finished
      continue;
    }
    all_idle = false;
    if (busy == nullptr) { break; }
    try {
      busy->push_back(stream);
    } catch (...) {
      return false;  // the caller cannot wait for what it was not told
    }
  }
  if (all_idle && watch) { d.idle_through.store(total, std::memory_order_release); }
  return all_idle;
}

bool program_streams::fence_later_work(int device) noexcept
{
  // Moved on before a capture is checked for, and the capture's start reads the generation after
  // counting itself (capture_noted): either this sees the capture, or the fence the capture's
  // start records covers the block.
  devices_[static_cast<std::size_t>(device)].generation.fetch_add(1, std::memory_order_seq_cst);
  return !capturing();
}

bool program_streams::fence_all(int device, CUevent legacy_event) noexcept
{
  auto const* driver = real();
  std::lock_guard lock{mutex_};
  return std::all_of(live_.begin(), live_.end(), [&](watched const* w) {
    return w->device != device ||
           driver->stream_wait_event(w->handle.load(std::memory_order_relaxed), legacy_event, 0) == CUDA_SUCCESS;
  });
}

bool program_streams::drained(int device) noexcept
{
  if (draining_count_.load(std::memory_order_acquire) == 0) { return true; }
  std::lock_guard lock{mutex_};
  forget_drained();
  return std::none_of(draining_.begin(), draining_.end(), [device](auto const& s) { return s.device == device; });
}

void program_streams::wait_drained(int device) noexcept
{
  if (draining_count_.load(std::memory_order_acquire) == 0) { return; }
  std::lock_guard lock{mutex_};  // rare: a destroyed stream still running when memory ran short
  for (auto const& s : draining_) {
    if (s.device == device) { (void)real()->event_synchronize(s.done); }
  }
  forget_drained();
}

void program_streams::forget_drained() noexcept
{
  auto const* driver = real();
  std::erase_if(draining_, [&](draining_stream const& s) {
    if (driver->event_query(s.done) == CUDA_ERROR_NOT_READY) { return false; }
    (void)driver->event_destroy(s.done);
    devices_[static_cast<std::size_t>(s.device)].non_blocking.fetch_sub(1, std::memory_order_seq_cst);
    return true;
  });
  draining_count_.store(static_cast<int>(draining_.size()), std::memory_order_release);
}

void program_streams::capture_noted(CUstream stream, std::uint64_t thread) noexcept
{
  std::lock_guard lock{captures_mutex_};
  std::pair const key{stream, thread};
  if (std::find(capturing_.begin(), capturing_.end(), key) != capturing_.end()) { return; }  // begun twice
  try {
    capturing_.push_back(key);
  } catch (...) {  // out of host memory: the capture goes unnoticed, as before the shim watched them
    return;
  }
  bool const first = capturing_.size() == 1;
  if (!first || !watching() || live_count_.load(std::memory_order_acquire) == 0) {
    captures_.store(static_cast<int>(capturing_.size()), std::memory_order_seq_cst);
    return;
  }
  // The capture has not begun: the legacy stream may still be used. Each device's fence is brought
  // up to its generation, read after the capture counts (fence_later_work), and the fence
  // locks are held meanwhile, so that no stream is fenced with an older one in between.
  std::array<std::unique_lock<std::mutex>, max_devices> locks;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].non_blocking.load(std::memory_order_seq_cst) > 0) {
      locks[i] = std::unique_lock{devices_[i].fence_mutex};
    }
  }
  captures_.store(static_cast<int>(capturing_.size()), std::memory_order_seq_cst);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (locks[i].owns_lock()) { (void)record_fence(static_cast<int>(i), devices_[i]); }
  }
}

void program_streams::capture_checked(CUstream stream, std::uint64_t thread, capture_state now) noexcept
{
  if (now == capture_state::ongoing) { return; }
  std::lock_guard lock{captures_mutex_};
  std::erase(capturing_, std::pair{stream, thread});
  captures_.store(static_cast<int>(capturing_.size()), std::memory_order_seq_cst);
}

program_streams::fence_counts program_streams::fences(int device) const noexcept
{
  if (!has_device_slot(device)) { return {0, 0}; }
  auto const& d = devices_[static_cast<std::size_t>(device)];
  return {d.fences_recorded.load(std::memory_order_relaxed), d.fences_waited.load(std::memory_order_relaxed)};
}

}  // namespace rmm::shim
