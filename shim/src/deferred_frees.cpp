// SPDX-License-Identifier: Apache-2.0
#include "deferred_frees.hpp"

#include "contexts.hpp"
#include "real_driver.hpp"

#include <algorithm>
#include <chrono>

namespace rmm::shim {

deferred_frees::deferred_frees(give_back_fn give_back) : give_back_{std::move(give_back)} {}

void deferred_frees::defer(int device, std::uintptr_t ptr, std::size_t size)
{
  auto& d                   = devices_.at(static_cast<std::size_t>(device));
  std::size_t closed_epochs = 0;
  std::vector<block> fenced;
  {
    std::lock_guard lock{d.mutex};
    d.open.blocks.push_back({ptr, size});
    d.open.bytes += size;
    d.pending_bytes += size;
    ++d.frees;
    if (d.open.blocks.size() < frees_per_epoch) { return; }
    switch (close_open(device, d, fenced)) {
      case closed_as::still_open: return;  // a capture is in progress: keep collecting
      case closed_as::fenced: break;
      case closed_as::waiting: closed_epochs = d.closed.size(); break;
    }
  }
  if (!fenced.empty()) {
    give_back_in_legacy_order(device, fenced);
    return;
  }
  // Stacks without a sub-allocator never ask for memory back: keep what waits bounded anyway,
  // taking what completed and, far behind, waiting for the oldest epoch.
  if (closed_epochs >= epochs_before_reclaim) {
    reclaim(device, closed_epochs >= epochs_before_wait ? reclaim_wait::for_one_epoch : reclaim_wait::completed_only);
  }
}

void deferred_frees::give_back_in_legacy_order(int device, std::vector<block> const& blocks)
{
  if (blocks.empty()) { return; }
  scoped_device_context const on_device{device};  // the legacy stream of the block's device
  for (auto const& b : blocks) { give_back_(device, b.ptr, b.size, true); }
}

auto deferred_frees::close_open(int device, per_device& d, std::vector<block>& fenced_blocks) -> closed_as
{
  auto& e = d.open;
  if (capturing()) { return closed_as::still_open; }
  // Checked before streams_mutex_ is taken (drained() takes it too).
  bool const may_fence = !d.stream_ordered_frees.load(std::memory_order_acquire) && drained(device);
  auto const* driver   = real();
  scoped_device_context const on_device{device};
  auto const next_event = [&]() -> CUevent {
    if (!d.spare_events.empty()) {
      auto const event = d.spare_events.back();
      d.spare_events.pop_back();
      return event;
    }
    CUevent event{};
    return driver->event_create(&event, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS ? event : nullptr;
  };
  auto const record_on = [&](CUstream stream) {
    auto const event = next_event();
    if (event == nullptr) { return false; }
    if (driver->event_record(event, stream) != CUDA_SUCCESS) {
      d.spare_events.push_back(event);
      return false;
    }
    e.events.push_back(event);
    return true;
  };
  // The legacy stream waits for all earlier work of every blocking stream of the context.
  bool recorded = record_on(CU_STREAM_LEGACY);
  bool fenced   = false;
  {
    std::lock_guard streams{streams_mutex_};  // a stream is not destroyed while recorded on
    bool all_idle = true;
    for (auto const& [stream, owner] : non_blocking_streams_) {
      if (!recorded) { break; }
      if (owner != device || driver->stream_query(stream) == CUDA_SUCCESS) { continue; }  // idle: nothing to fence
      all_idle = false;
      recorded = record_on(stream);
    }
    // No non-blocking stream still runs work submitted before these frees: only the legacy
    // stream's work may use the blocks. Work a non-blocking stream runs from now on waits for it.
    if (recorded && all_idle && may_fence) {
      fenced = std::all_of(non_blocking_streams_.begin(), non_blocking_streams_.end(), [&](auto const& s) {
        return s.second != device || driver->stream_wait_event(s.first, e.events.front(), 0) == CUDA_SUCCESS;
      });
    }
  }
  if (!recorded) {
    d.spare_events.insert(d.spare_events.end(), e.events.begin(), e.events.end());
    e.events.clear();
    return closed_as::still_open;
  }
  if (fenced) {
    recycle(d, e);  // a wait already made keeps the state the event had when it was made
    d.pending_bytes -= e.bytes;
    fenced_blocks = std::move(e.blocks);
    e             = {};
    d.fenced_epochs.fetch_add(1, std::memory_order_relaxed);
    return closed_as::fenced;
  }
  d.closed.push_back(std::move(e));
  e = {};
  d.waited_epochs.fetch_add(1, std::memory_order_relaxed);
  return closed_as::waiting;
}

bool deferred_frees::completed(epoch const& e) const noexcept
{
  auto const* driver = real();
  return std::all_of(e.events.begin(), e.events.end(), [driver](CUevent event) {
    // An error other than "not ready" means the context is broken: nothing will run any more.
    return driver->event_query(event) != CUDA_ERROR_NOT_READY;
  });
}

void deferred_frees::recycle(per_device& d, epoch& e)
{
  d.spare_events.insert(d.spare_events.end(), e.events.begin(), e.events.end());
  e.events.clear();
}

std::size_t deferred_frees::reclaim(int device, reclaim_wait wait)
{
  auto& d = devices_.at(static_cast<std::size_t>(device));
  std::vector<block> ready;
  std::vector<block> fenced;
  std::optional<epoch> waited;
  {
    std::lock_guard lock{d.mutex};
    while (!d.closed.empty() && completed(d.closed.front()) && drained(device)) {
      auto& e = d.closed.front();
      ready.insert(ready.end(), e.blocks.begin(), e.blocks.end());
      recycle(d, e);
      d.closed.pop_front();
    }
    if (ready.empty() && wait == reclaim_wait::for_one_epoch) {
      // A fenced epoch is reusable at once: nothing to wait for.
      if (d.closed.empty() && !d.open.blocks.empty()) { (void)close_open(device, d, fenced); }
      if (fenced.empty() && !d.closed.empty()) {
        waited = std::move(d.closed.front());
        d.closed.pop_front();
      }
    }
  }
  if (waited) {
    // Not under the lock: frees on this device go on while the host waits for the GPU.
    auto const start = std::chrono::steady_clock::now();
    for (auto const event : waited->events) { (void)real()->event_synchronize(event); }
    wait_drained(device);
    auto const waited_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    d.waits.fetch_add(1, std::memory_order_relaxed);
    d.wait_ns.fetch_add(static_cast<std::uint64_t>(waited_ns.count()), std::memory_order_relaxed);
    std::lock_guard lock{d.mutex};
    ready.insert(ready.end(), waited->blocks.begin(), waited->blocks.end());
    recycle(d, *waited);
  }
  std::size_t bytes = 0;
  for (auto const& b : ready) { bytes += b.size; }
  {
    std::lock_guard lock{d.mutex};
    d.pending_bytes -= bytes;
  }
  for (auto const& b : fenced) { bytes += b.size; }  // taken off pending_bytes when fenced
  // Memory no work uses any more is safe in any order. While cudaMalloc takes memory in the legacy
  // stream's order, it goes back there too: next to the free blocks it borders, not into a second
  // free list where it could not merge with them.
  if (fenced_reuse(device)) {
    give_back_in_legacy_order(device, ready);
  } else {
    for (auto const& b : ready) { give_back_(device, b.ptr, b.size, false); }
  }
  give_back_in_legacy_order(device, fenced);
  return bytes;
}

void deferred_frees::forget_device(int device) noexcept
{
  if (!has_device_slot(device)) { return; }
  auto& d = devices_[static_cast<std::size_t>(device)];
  {
    std::lock_guard lock{d.mutex};
    d.open = {};
    d.closed.clear();
    d.spare_events.clear();
    d.pending_bytes = 0;
    d.stream_ordered_frees.store(false, std::memory_order_seq_cst);  // the new stack has no unfenced block
  }
  std::lock_guard streams{streams_mutex_};
  std::erase_if(non_blocking_streams_, [device](auto const& s) { return s.second == device; });
  std::erase_if(draining_, [device](draining_stream const& s) { return s.device == device; });
  draining_count_.store(static_cast<int>(draining_.size()), std::memory_order_release);
  d.non_blocking_streams.store(0, std::memory_order_seq_cst);
}

std::size_t deferred_frees::pending_bytes(int device) const noexcept
{
  if (!has_device_slot(device)) { return 0; }
  auto const& d = devices_[static_cast<std::size_t>(device)];
  std::lock_guard lock{d.mutex};
  return d.pending_bytes;
}

void deferred_frees::stream_created(CUstream stream, unsigned int flags, int device)
{
  if ((flags & CU_STREAM_NON_BLOCKING) == 0) { return; }  // blocking: the legacy stream's event covers it
  if (!has_device_slot(device)) { return; }
  // Counted before the fence is recorded: an allocation that saw no non-blocking stream either
  // took its block before the fence (which then covers the block's earlier work) or sees the count
  // when it checks again (dispatch.cpp).
  devices_[static_cast<std::size_t>(device)].non_blocking_streams.fetch_add(1, std::memory_order_seq_cst);
  devices_[static_cast<std::size_t>(device)].streams_created.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock{streams_mutex_};
    non_blocking_streams_.emplace_back(stream, device);
  }
  // Blocks handed out in the legacy stream's order may still be used by work queued before this
  // stream existed; the stream does not take part in the legacy stream's synchronization.
  // While a capture is in progress nothing may touch the legacy stream: no fence (docs/shim.md).
  if (capturing()) { return; }
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

void deferred_frees::stream_destroyed(CUstream stream) noexcept
{
  capture_checked(stream, 0, false);  // a stream destroyed while capturing captures no more
  std::lock_guard lock{streams_mutex_};
  auto const found = std::find_if(non_blocking_streams_.begin(), non_blocking_streams_.end(),
                                  [stream](auto const& s) { return s.first == stream; });
  if (found == non_blocking_streams_.end()) { return; }
  auto const device = found->second;
  non_blocking_streams_.erase(found);
  // Work the program queued before destroying the stream still runs: the stream counts until then.
  auto const* driver = real();
  CUstreamCaptureStatus status{CU_STREAM_CAPTURE_STATUS_NONE};
  if (driver->stream_is_capturing(stream, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE) {
    // Not even asked: a query of a capturing stream ends its capture. Whatever the stream ran before
    // its capture may still run, and nothing can watch it: the stream counts for good.
    return;
  }
  if (driver->stream_query(stream) == CUDA_ERROR_NOT_READY) {
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
  devices_[static_cast<std::size_t>(device)].non_blocking_streams.fetch_sub(1, std::memory_order_seq_cst);
}

bool deferred_frees::legacy_order_suffices(int device) noexcept
{
  if (capturing() || !has_device_slot(device)) { return false; }
  auto& d = devices_[static_cast<std::size_t>(device)];
  if (d.non_blocking_streams.load(std::memory_order_seq_cst) == 0) { return true; }
  (void)drained(device);
  return d.non_blocking_streams.load(std::memory_order_seq_cst) == 0;
}

bool deferred_frees::drained(int device) noexcept
{
  if (draining_count_.load(std::memory_order_acquire) == 0) { return true; }
  std::lock_guard lock{streams_mutex_};
  forget_drained();
  return std::none_of(draining_.begin(), draining_.end(), [device](auto const& s) { return s.device == device; });
}

void deferred_frees::wait_drained(int device) noexcept
{
  if (draining_count_.load(std::memory_order_acquire) == 0) { return; }
  std::lock_guard lock{streams_mutex_};  // rare: a destroyed stream still running when memory ran short
  for (auto const& s : draining_) {
    if (s.device == device) { (void)real()->event_synchronize(s.done); }
  }
  forget_drained();
}

void deferred_frees::forget_drained() noexcept
{
  auto const* driver = real();
  std::erase_if(draining_, [&](draining_stream const& s) {
    if (driver->event_query(s.done) == CUDA_ERROR_NOT_READY) { return false; }
    (void)driver->event_destroy(s.done);
    devices_[static_cast<std::size_t>(s.device)].non_blocking_streams.fetch_sub(1, std::memory_order_seq_cst);
    return true;
  });
  draining_count_.store(static_cast<int>(draining_.size()), std::memory_order_release);
}

std::size_t deferred_frees::frees_through_epochs(int device) const noexcept
{
  if (!has_device_slot(device)) { return 0; }
  auto const& d = devices_[static_cast<std::size_t>(device)];
  std::lock_guard lock{d.mutex};
  return d.frees;
}

std::size_t deferred_frees::non_blocking_streams_created(int device) const noexcept
{
  if (!has_device_slot(device)) { return 0; }
  return devices_[static_cast<std::size_t>(device)].streams_created.load(std::memory_order_relaxed);
}

bool deferred_frees::fenced_reuse(int device) const noexcept
{
  if (capturing() || !has_device_slot(device)) { return false; }
  return !devices_[static_cast<std::size_t>(device)].stream_ordered_frees.load(std::memory_order_acquire);
}

void deferred_frees::note_stream_ordered_free(int device) noexcept
{
  if (!has_device_slot(device)) { return; }
  auto& seen = devices_[static_cast<std::size_t>(device)].stream_ordered_frees;
  if (!seen.load(std::memory_order_relaxed)) { seen.store(true, std::memory_order_seq_cst); }  // once
}

deferred_frees::epoch_counts deferred_frees::epochs(int device) const noexcept
{
  if (!has_device_slot(device)) { return {0, 0}; }
  auto const& d = devices_[static_cast<std::size_t>(device)];
  return {d.fenced_epochs.load(std::memory_order_relaxed), d.waited_epochs.load(std::memory_order_relaxed)};
}

deferred_frees::device_waits deferred_frees::waits(int device) const noexcept
{
  if (!has_device_slot(device)) { return {0, 0}; }
  auto const& d = devices_[static_cast<std::size_t>(device)];
  return {d.waits.load(std::memory_order_relaxed), d.wait_ns.load(std::memory_order_relaxed)};
}

void deferred_frees::capture_noted(CUstream stream, std::uint64_t thread) noexcept
{
  std::lock_guard lock{captures_mutex_};
  std::pair const key{stream, thread};
  if (std::find(capturing_.begin(), capturing_.end(), key) != capturing_.end()) { return; }  // begun twice
  try {
    capturing_.push_back(key);
  } catch (...) {  // out of host memory: the capture goes unnoticed, as before the shim watched them
    return;
  }
  captures_.store(static_cast<int>(capturing_.size()), std::memory_order_release);
}

void deferred_frees::capture_checked(CUstream stream, std::uint64_t thread, bool still_capturing) noexcept
{
  if (still_capturing) { return; }
  std::lock_guard lock{captures_mutex_};
  std::erase(capturing_, std::pair{stream, thread});
  captures_.store(static_cast<int>(capturing_.size()), std::memory_order_release);
}

}  // namespace rmm::shim
