// SPDX-License-Identifier: Apache-2.0
#pragma once

// The device-wide free policy. cudaFree and cuMemFree promise that the memory is no longer in use
// by any work submitted before them, on any stream, and real programs rely on it (PyTorch with its
// cache off frees a tensor while kernels reading it are still queued). Synchronizing the device at
// each free would keep that promise at a high price; instead the frees of each device are collected
// into epochs. An epoch is closed with an event recorded on the legacy default stream (which waits
// for every blocking stream). When no non-blocking stream has work at that moment, none can still
// use the epoch's blocks: each is made to wait for the legacy event (a fence), and the blocks go
// back to the stack at once, in the legacy stream's order, for allocations taken in that order.
// Otherwise the busy non-blocking streams get events too, and the blocks go back once all the
// events have completed. Closing costs a few driver calls per epoch, not per free; nothing is
// waited for until the stack would otherwise have to grow.

#include "devices.hpp"
#include <cuda.h>

#include <array>
#include <atomic>
#include <optional>
#include <utility>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

namespace rmm::shim {

/// What deferred_frees::reclaim does when no epoch has completed: nothing more, or wait for one.
enum class reclaim_wait : std::uint8_t {
  completed_only,  ///< give back what completed; never wait for the device
  for_one_epoch    ///< when nothing completed, wait for the oldest epoch (closing the open one if alone)
};

class deferred_frees {
 public:
  /// Gives a block back to the stack of its device: in the legacy stream's order (`in_legacy_order`,
  /// a fenced epoch; the device's primary context is current) or as memory no work uses any more.
  /// Called with no lock held.
  using give_back_fn = std::function<void(int device, std::uintptr_t ptr, std::size_t size, bool in_legacy_order)>;

  explicit deferred_frees(give_back_fn give_back);
  deferred_frees(deferred_frees const&)            = delete;
  deferred_frees& operator=(deferred_frees const&) = delete;

  /// Queues a block freed on `device`. Closes the device's open epoch when it is full.
  void defer(int device, std::uintptr_t ptr, std::size_t size);

  /// Gives back every block of `device` whose epoch completed. With `reclaim_wait::for_one_epoch`,
  /// when none has, closes the open epoch if nothing else is pending and waits for the oldest one.
  /// Returns the bytes given back. `device`'s primary context must be current.
  std::size_t reclaim(int device, reclaim_wait wait);

  /// Forgets everything pending on `device` after the device was reset: the blocks went with its
  /// memory, the events and streams with its context (their handles are dropped, not destroyed).
  void forget_device(int device) noexcept;

  /// Bytes freed on `device` and not yet given back.
  [[nodiscard]] std::size_t pending_bytes(int device) const noexcept;

  /// The program's streams: non-blocking ones need an event of their own in each epoch. A new
  /// non-blocking stream is made to wait for the legacy stream's work so far (see below).
  void stream_created(CUstream stream, unsigned int flags, int device);
  void stream_destroyed(CUstream stream) noexcept;

  /// True while `device` has no non-blocking stream (none alive, none destroyed with work still
  /// running) and no capture is in progress. Every stream of the program then takes part in the
  /// legacy stream's implicit synchronization, so ordering a free on the legacy stream keeps
  /// cudaFree's promise, and a block taken in the legacy stream's order is safe for every stream:
  /// memory is reused at once, as in the stream-ordered policy. A non-blocking stream created later
  /// first waits for the legacy stream's work submitted before it existed. One atomic load.
  [[nodiscard]] bool legacy_order_suffices(int device) noexcept;

  /// True while allocations on `device` may be taken in the legacy stream's order although it has
  /// non-blocking streams: every block there was either freed before those streams existed (their
  /// creation fence covers it) or given back from a fenced epoch. A stream-ordered free
  /// (cudaFreeAsync) puts blocks there without a fence, so the first one ends this for the device
  /// (note_stream_ordered_free), as does a capture in progress.
  [[nodiscard]] bool fenced_reuse(int device) const noexcept;
  void note_stream_ordered_free(int device) noexcept;

  /// Non-blocking streams of `device` alive or still running work.
  [[nodiscard]] int non_blocking_streams(int device) const noexcept
  {
    return devices_[static_cast<std::size_t>(device)].non_blocking_streams.load(std::memory_order_seq_cst);
  }

  /// For the report: frees of `device` that went through epochs, and the non-blocking streams the
  /// program created on it.
  [[nodiscard]] std::size_t frees_through_epochs(int device) const noexcept;
  [[nodiscard]] std::size_t non_blocking_streams_created(int device) const noexcept;
  /// For the report: how often the host waited for the device to finish with freed memory of
  /// `device`, and for how long in all.
  struct device_waits {
    std::size_t count;
    std::uint64_t ns;
  };
  [[nodiscard]] device_waits waits(int device) const noexcept;
  /// For the report: epochs of `device` given back at once behind a fence, and epochs that waited
  /// for their events.
  struct epoch_counts {
    std::size_t fenced;
    std::size_t waited;
  };
  [[nodiscard]] epoch_counts epochs(int device) const noexcept;

  /// Stream captures in progress in the process: while any is, no epoch is closed and nothing is
  /// ordered on the legacy stream (work there would invalidate a capture of a blocking stream).
  /// `stream` with `thread` names a capture (`thread` tells the per-thread default streams apart,
  /// 0 for other streams). Noted before the capture may begin, checked when it may have ended (or
  /// did not begin): forgotten once the driver says the stream no longer captures.
  void capture_noted(CUstream stream, std::uint64_t thread) noexcept;
  void capture_checked(CUstream stream, std::uint64_t thread, bool still_capturing) noexcept;
  [[nodiscard]] bool capturing() const noexcept { return captures_.load(std::memory_order_acquire) > 0; }

  /// Frees per epoch. Longer epochs would cost fewer fences with many non-blocking streams, but the
  /// blocks they hold back scatter the allocations made meanwhile: with epochs of 8 frees per stream
  /// (256 beside PyTorch's 32 streams), a ViT in bf16 reserved 1.54x its peak live on the H200,
  /// against 1.23x with 32 (docs/apps.md).
  static constexpr std::size_t frees_per_epoch       = 32;
  static constexpr std::size_t epochs_before_reclaim = 4;
  static constexpr std::size_t epochs_before_wait    = 16;

 private:
  struct block {
    std::uintptr_t ptr;
    std::size_t size;
  };
  struct epoch {
    std::vector<block> blocks;
    std::size_t bytes{0};
    std::vector<CUevent> events;  // empty while open
  };
  struct per_device {
    mutable std::mutex mutex;
    epoch open;
    std::deque<epoch> closed;  // oldest first
    std::vector<CUevent> spare_events;
    std::size_t pending_bytes{0};
    std::atomic<int> non_blocking_streams{0};  // alive, or destroyed with work still running
    std::atomic<std::size_t> streams_created{0};
    std::size_t frees{0};                           // ever deferred
    std::atomic<bool> stream_ordered_frees{false};  // a cudaFreeAsync was served: no fenced reuse
    std::atomic<std::size_t> fenced_epochs{0};
    std::atomic<std::size_t> waited_epochs{0};
    std::atomic<std::size_t> waits{0};
    std::atomic<std::uint64_t> wait_ns{0};
  };
  struct draining_stream {
    CUevent done;  // recorded on the stream when the program destroyed it
    int device;
  };

  /// How an epoch was closed: not at all (a capture is in progress, or no event could be recorded),
  /// fenced (its blocks may be reused at once in the legacy stream's order), or with events to wait for.
  enum class closed_as { still_open, fenced, waiting };
  /// Closes d.open, which then starts afresh: a fenced epoch's blocks are moved to `fenced_blocks`
  /// (no longer pending) and its events recycled; a waiting one joins d.closed. Still open, it is
  /// left as it was. d.mutex held.
  closed_as close_open(int device, per_device& d, std::vector<block>& fenced_blocks);
  /// Gives blocks back in the legacy stream's order (a fenced epoch's, or blocks no work uses any
  /// more while cudaMalloc takes memory in that order); no lock held.
  void give_back_in_legacy_order(int device, std::vector<block> const& blocks);
  [[nodiscard]] bool completed(epoch const& e) const noexcept;
  /// Whether every stream of `device` the program destroyed while it had work finished that work
  /// (the epochs' events cannot cover it); forgets those that did. Takes streams_mutex_.
  bool drained(int device) noexcept;
  /// Waits until every destroyed stream of `device` finished its work.
  void wait_drained(int device) noexcept;
  /// Forgets the destroyed streams that finished; streams_mutex_ held.
  void forget_drained() noexcept;
  void recycle(per_device& d, epoch& e);

  give_back_fn give_back_;
  std::array<per_device, max_devices> devices_;
  std::mutex streams_mutex_;  // held while events are recorded on the program's streams
  std::vector<std::pair<CUstream, int>> non_blocking_streams_;
  std::vector<draining_stream> draining_;  // under streams_mutex_
  std::atomic<int> draining_count_{0};     // its size, read without the lock
  std::mutex captures_mutex_;
  std::vector<std::pair<CUstream, std::uint64_t>> capturing_;  // under captures_mutex_
  std::atomic<int> captures_{0};                               // its size, read without the lock
};

}  // namespace rmm::shim
