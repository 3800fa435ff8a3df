// SPDX-License-Identifier: Apache-2.0
#include "frees/deferred_frees.hpp"

#include "driver/contexts.hpp"
#include "driver/real_driver.hpp"

#include <algorithm>
#include <chrono>

namespace rmm::shim {

deferred_frees::deferred_frees(give_back_fn give_back, program_streams& streams)
  : give_back_{std::move(give_back)}, streams_{streams}
{
}

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
    d.open_frees.store(d.open.blocks.size(), std::memory_order_relaxed);
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
  for (auto const& b : blocks) { give_back_(device, b.ptr, b.size, give_back_order::legacy_stream); }
}

auto deferred_frees::close_open(int device, per_device& d, std::vector<block>& fenced_blocks) -> closed_as
{
  auto& e = d.open;
  if (streams_.capturing()) { return closed_as::still_open; }
  // Checked before the streams are (drained() and idle() take the streams' lock).
  bool const may_fence = fenced_reuse(device) && streams_.drained(device);
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
  auto const reopen = [&] {
    d.spare_events.insert(d.spare_events.end(), e.events.begin(), e.events.end());
    e.events.clear();
    return closed_as::still_open;
  };
  std::vector<CUstream> busy;
  bool const all_idle = streams_.idle(device, program_streams::ask_streams::when_needed, &busy);
  bool fenced         = false;
  if (all_idle && may_fence) {
    // No non-blocking stream still runs work submitted before these frees: only the legacy
    // stream's work may use the blocks. Work a non-blocking stream runs from now on waits for it:
    // a watched stream behind the fence it gets once a block is taken (dispatch.cpp), otherwise
    // behind an event each waits for now.
    fenced = streams_.watching() || (record_on(CU_STREAM_LEGACY) && streams_.fence_all(device, e.events.front()));
  }
  if (!fenced) {
    if (streams_.capturing()) { return reopen(); }  // begun meanwhile: nothing on the legacy stream now
    // The legacy stream waits for all earlier work of every blocking stream of the context.
    bool const recorded = (!e.events.empty() || record_on(CU_STREAM_LEGACY)) && streams_.record_on(busy, record_on);
    if (!recorded) { return reopen(); }
  }
  if (fenced) {
    recycle(d, e);  // a wait already made keeps the state the event had when it was made
    d.pending_bytes -= e.bytes;
    fenced_blocks = std::move(e.blocks);
    e             = {};
    d.open_frees.store(0, std::memory_order_relaxed);
    d.fenced_epochs.fetch_add(1, std::memory_order_relaxed);
    return closed_as::fenced;
  }
  d.closed.push_back(std::move(e));
  e = {};
  d.open_frees.store(0, std::memory_order_relaxed);
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
    while (!d.closed.empty() && completed(d.closed.front()) && streams_.drained(device)) {
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
    streams_.wait_drained(device);
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
    for (auto const& b : ready) { give_back_(device, b.ptr, b.size, give_back_order::no_work_left); }
  }
  give_back_in_legacy_order(device, fenced);
  return bytes;
}

void deferred_frees::forget_device(int device) noexcept
{
  if (!has_device_slot(device)) { return; }
  auto& d = devices_[static_cast<std::size_t>(device)];
  std::lock_guard lock{d.mutex};
  d.open = {};
  d.closed.clear();
  d.spare_events.clear();
  d.pending_bytes = 0;
  d.open_frees.store(0, std::memory_order_relaxed);
  d.stream_ordered_frees.store(false, std::memory_order_seq_cst);  // the new stack has no unfenced block
}

std::size_t deferred_frees::pending_bytes(int device) const noexcept
{
  if (!has_device_slot(device)) { return 0; }
  auto const& d = devices_[static_cast<std::size_t>(device)];
  std::lock_guard lock{d.mutex};
  return d.pending_bytes;
}

bool deferred_frees::legacy_order_suffices(int device) noexcept
{
  if (streams_.capturing() || !has_device_slot(device)) { return false; }
  if (streams_.non_blocking(device) == 0) [[likely]] { return true; }
  if (!streams_.watching()) {
    (void)streams_.drained(device);  // a destroyed stream that finished no longer counts
    return streams_.non_blocking(device) == 0;
  }
  // Streams are asked only while no free waits in the open epoch: while one does, a busy stream
  // was found there, and the epoch's close asks again (a query per free would cost more than
  // the epoch saves).
  auto const& d  = devices_[static_cast<std::size_t>(device)];
  auto const ask = d.open_frees.load(std::memory_order_relaxed) == 0 ? program_streams::ask_streams::when_needed
                                                                     : program_streams::ask_streams::never;
  return streams_.idle(device, ask);
}

std::size_t deferred_frees::frees_through_epochs(int device) const noexcept
{
  if (!has_device_slot(device)) { return 0; }
  auto const& d = devices_[static_cast<std::size_t>(device)];
  std::lock_guard lock{d.mutex};
  return d.frees;
}

bool deferred_frees::fenced_reuse(int device) const noexcept
{
  if (streams_.capturing() || !has_device_slot(device)) { return false; }
  // Watched streams wait behind a fence for blocks a stream-ordered free put there too.
  return streams_.watching() ||
         !devices_[static_cast<std::size_t>(device)].stream_ordered_frees.load(std::memory_order_acquire);
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

}  // namespace rmm::shim
