// SPDX-License-Identifier: Apache-2.0
#pragma once

// The device-wide free policy. cudaFree and cuMemFree promise that the memory is no longer in use
// by any work submitted before them, on any stream, and real programs rely on it (PyTorch with its
// cache off frees a tensor while kernels reading it are still queued). Synchronizing the device at
// each free would keep that promise at a high price. Instead, a block goes back to the stack at
// once, in the legacy default stream's order (which waits for every blocking stream), whenever no
// non-blocking stream can still run work submitted before the free (program_streams.hpp knows,
// mostly without asking the driver); the non-blocking streams' later work waits behind a fence.
// Otherwise the frees of each device are collected into epochs. An epoch is closed with an event
// on the legacy stream and on each busy non-blocking stream, and its blocks go back once all the
// events have completed. Closing costs a few driver calls per epoch, not per free; nothing is
// waited for until the stack would otherwise have to grow.

#include "devices.hpp"
#include "frees/program_streams.hpp"
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

/// How a block goes back to its stack.
enum class give_back_order {
  legacy_stream,  ///< ordered on the legacy stream (a fenced epoch; the device's primary context is current)
  no_work_left    ///< as memory no work uses any more
};

class deferred_frees {
 public:
  /// Gives a block back to the stack of its device, in `order`. Called with no lock held.
  using give_back_fn = std::function<void(int device, std::uintptr_t ptr, std::size_t size, give_back_order order)>;

  deferred_frees(give_back_fn give_back, program_streams& streams);
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

  /// True while no non-blocking stream of `device` can still run work submitted before now (none
  /// exists, or none had work since it was last found idle) and no capture is in progress. Every
  /// other stream takes part in the legacy stream's implicit synchronization, so ordering a free on
  /// the legacy stream keeps cudaFree's promise, and a block taken in that order is safe for every
  /// stream (the non-blocking ones' later work waits behind a fence, dispatch.cpp): memory is reused
  /// at once, as in the stream-ordered policy. Without non-blocking streams, one atomic load.
  [[nodiscard]] bool legacy_order_suffices(int device) noexcept;

  /// True while allocations on `device` may be taken in the legacy stream's order although it has
  /// non-blocking streams: every block there was either freed before those streams existed (their
  /// creation fence covers it) or given back from a fenced epoch. Without the streams' watch, a
  /// stream-ordered free (cudaFreeAsync) puts blocks there without a fence, so the first one ends
  /// this for the device (note_stream_ordered_free); with it, the watched streams' next work waits
  /// behind a fence for those blocks too. A capture in progress ends it while it lasts.
  [[nodiscard]] bool fenced_reuse(int device) const noexcept;
  void note_stream_ordered_free(int device) noexcept;

  /// For the report: frees of `device` that went through epochs.
  [[nodiscard]] std::size_t frees_through_epochs(int device) const noexcept;
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
    std::atomic<std::size_t> open_frees{0};         // open.blocks.size(), read without the lock
    std::size_t frees{0};                           // ever deferred
    std::atomic<bool> stream_ordered_frees{false};  // a cudaFreeAsync was served: no fenced reuse
    std::atomic<std::size_t> fenced_epochs{0};
    std::atomic<std::size_t> waited_epochs{0};
    std::atomic<std::size_t> waits{0};
    std::atomic<std::uint64_t> wait_ns{0};
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
  void recycle(per_device& d, epoch& e);

  give_back_fn give_back_;
  program_streams& streams_;
  std::array<per_device, max_devices> devices_;
};

}  // namespace rmm::shim
