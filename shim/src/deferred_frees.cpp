#include "deferred_frees.hpp"

#include "contexts.hpp"
#include "real_driver.hpp"

#include <algorithm>

namespace rmm::shim {

deferred_frees::deferred_frees(give_back_fn give_back) : give_back_{std::move(give_back)} {}

void deferred_frees::defer(int device, std::uintptr_t ptr, std::size_t size)
{
  auto& d = devices_.at(static_cast<std::size_t>(device));
  std::size_t closed_epochs = 0;
  {
    std::lock_guard lock{d.mutex};
    d.open.blocks.push_back({ptr, size});
    d.open.bytes += size;
    d.pending_bytes += size;
    if (d.open.blocks.size() < frees_per_epoch) { return; }
    epoch full = std::move(d.open);
    d.open     = {};
    if (!close(device, d, full)) {  // a capture is in progress: keep collecting
      d.open = std::move(full);
      return;
    }
    closed_epochs = d.closed.size();
  }
  // Stacks without a sub-allocator never ask for memory back: keep what waits bounded anyway,
  // taking what completed and, far behind, waiting for the oldest epoch.
  if (closed_epochs >= epochs_before_reclaim) { reclaim(device, closed_epochs >= epochs_before_wait); }
}

bool deferred_frees::close(int device, per_device& d, epoch& e)
{
  if (captures_.load(std::memory_order_acquire) > 0) { return false; }
  auto const* driver = real();
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
  {
    std::lock_guard streams{streams_mutex_};  // a stream is not destroyed while recorded on
    for (auto const& [stream, owner] : non_blocking_streams_) {
      if (!recorded) { break; }
      if (owner != device || driver->stream_query(stream) == CUDA_SUCCESS) { continue; }  // idle: nothing to fence
      recorded = record_on(stream);
    }
  }
  if (!recorded) {
    d.spare_events.insert(d.spare_events.end(), e.events.begin(), e.events.end());
    e.events.clear();
    return false;
  }
  d.closed.push_back(std::move(e));
  return true;
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

std::size_t deferred_frees::reclaim(int device, bool wait_for_one)
{
  auto& d = devices_.at(static_cast<std::size_t>(device));
  std::vector<block> ready;
  std::optional<epoch> waited;
  {
    std::lock_guard lock{d.mutex};
    while (!d.closed.empty() && completed(d.closed.front())) {
      auto& e = d.closed.front();
      ready.insert(ready.end(), e.blocks.begin(), e.blocks.end());
      recycle(d, e);
      d.closed.pop_front();
    }
    if (ready.empty() && wait_for_one) {
      if (d.closed.empty() && !d.open.blocks.empty()) {
        epoch open = std::move(d.open);
        d.open     = {};
        if (!close(device, d, open)) { d.open = std::move(open); }
      }
      if (!d.closed.empty()) {
        waited = std::move(d.closed.front());
        d.closed.pop_front();
      }
    }
  }
  if (waited) {
    // Not under the lock: frees on this device go on while the host waits for the GPU.
    for (auto const event : waited->events) {
      (void)real()->event_synchronize(event);
    }
    std::lock_guard lock{d.mutex};
    ready.insert(ready.end(), waited->blocks.begin(), waited->blocks.end());
    recycle(d, *waited);
  }
  std::size_t bytes = 0;
  for (auto const& b : ready) {
    bytes += b.size;
  }
  {
    std::lock_guard lock{d.mutex};
    d.pending_bytes -= bytes;
  }
  for (auto const& b : ready) {
    give_back_(device, b.ptr, b.size);
  }
  return bytes;
}

std::size_t deferred_frees::pending_bytes(int device) const noexcept
{
  if (device < 0 || device >= max_devices) { return 0; }
  auto const& d = devices_[static_cast<std::size_t>(device)];
  std::lock_guard lock{d.mutex};
  return d.pending_bytes;
}

void deferred_frees::stream_created(CUstream stream, unsigned int flags, int device)
{
  if ((flags & CU_STREAM_NON_BLOCKING) == 0) { return; }  // blocking: the legacy stream's event covers it
  std::lock_guard lock{streams_mutex_};
  non_blocking_streams_.emplace_back(stream, device);
}

void deferred_frees::stream_destroyed(CUstream stream) noexcept
{
  std::lock_guard lock{streams_mutex_};
  std::erase_if(non_blocking_streams_, [stream](auto const& s) { return s.first == stream; });
}

void deferred_frees::capture_began() noexcept { captures_.fetch_add(1, std::memory_order_acq_rel); }
void deferred_frees::capture_ended() noexcept { captures_.fetch_sub(1, std::memory_order_acq_rel); }

}  // namespace rmm::shim
