// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the program's streams are doing, as far as cudaFree's promise needs to know: which
// non-blocking streams exist and may still run work submitted before a free, and which streams
// capture. Blocking streams take part in the legacy stream's implicit synchronization, so only
// non-blocking ones are kept here.
//
// The shim wraps every driver entry point that submits work to a stream (submission_hooks.cpp),
// and counts each submission on the stream's record. A stream whose count has not moved since it
// was last found idle runs nothing a freed block may be used by: a free costs no driver call for
// it. That is what makes PyTorch's 32 idle non-blocking streams free of charge.
//
// Blocks are taken in the legacy stream's order while old work on them may still run there; a
// non-blocking stream does not wait for that work by itself. So every such allocation moves its
// device's generation on, and the next submission to a watched stream behind the generation first
// waits for an event of the legacy stream recorded after it (its fence). The event is
// recorded once per generation and device, when a stream first needs it, and each stream waits for
// it once.
//
// Sound only while every submission is seen. The first entry point handed out unwrapped that may
// submit work (a newer driver's, an old ABI) ends the watch for the process (lose_sight): the
// epochs then query and fence every non-blocking stream at each close, as without it.

#include "devices.hpp"
#include <cuda.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace rmm::shim {

/// Whether a stream still captures, as the driver said when asked.
enum class capture_state { ongoing, over };

class program_streams {
 public:
  /// One watched non-blocking stream.
  struct watched {
    std::atomic<CUstream> handle{nullptr};  // null: a slot never used; tombstone: one given up
    int device{-1};
    std::atomic<std::uint64_t> submitted{0};  // submissions forwarded to the driver, counted after each
    std::uint64_t idle_through{0};            // submissions known to have finished; under mutex_
    std::atomic<std::uint64_t> fenced_at{0};  // the device's generation its later work waits behind
  };

  program_streams();
  program_streams(program_streams const&)            = delete;
  program_streams& operator=(program_streams const&) = delete;

  /// Whether submissions are watched: the [shim] setting allows it and none was missed (lose_sight).
  [[nodiscard]] bool watching() const noexcept { return watching_.load(std::memory_order_acquire); }
  /// Ends the watch for good: `why` names what the program was handed that the shim cannot see.
  void lose_sight(std::string why) noexcept;
  /// Why the watch ended ("" while it holds or was never on).
  [[nodiscard]] std::string why_not_watching() const;
  /// Turns the watch off from the start, as the [shim] setting `watch_streams = false` asks.
  void never_watch() noexcept;

  // Life of the program's streams (the hooks of cuStreamCreate*, cuStreamDestroy).

  /// A stream the program created on `device`. A non-blocking one is watched, and first waits for
  /// the legacy stream's work so far: blocks given out in that order may still be in use there.
  void created(CUstream stream, unsigned int flags, int device) noexcept;
  /// A stream the program destroys. Work it queued still runs: the stream counts until it is done.
  void destroyed(CUstream stream) noexcept;
  /// Forgets every stream of `device` after a reset destroyed them (handles dropped, not destroyed).
  void forget_device(int device) noexcept;

  /// Non-blocking streams of `device` alive or still running work.
  [[nodiscard]] int non_blocking(int device) const noexcept
  {
    return devices_[static_cast<std::size_t>(device)].non_blocking.load(std::memory_order_seq_cst);
  }
  /// Non-blocking streams the program created on `device`, for the report.
  [[nodiscard]] std::size_t created_count(int device) const noexcept;

  // Submissions (submission_hooks.cpp).

  /// The watched stream `stream`, or null: the legacy and per-thread streams, blocking streams and
  /// handles the shim never saw.
  [[nodiscard]] watched* find(CUstream stream) noexcept;
  /// Before work is submitted to `w`: its fence, when blocks went back in the legacy order since.
  void before_submission(watched& w) noexcept;
  /// After the driver took the work.
  void after_submission(watched& w) noexcept
  {
    w.submitted.fetch_add(1, std::memory_order_release);
    devices_[static_cast<std::size_t>(w.device)].submissions.fetch_add(1, std::memory_order_release);
  }

  // What a free needs to know. `device`'s primary context current; no capture in progress.

  /// Whether no non-blocking stream of `device` can still run work submitted before now. With the
  /// watch, only streams that had work since they were last found idle are asked (cuStreamQuery),
  /// and only when `ask` allows; without it, every one is asked. Busy streams go to `busy`.
  enum class ask_streams : bool { never, when_needed };
  [[nodiscard]] bool idle(int device, ask_streams ask, std::vector<CUstream>* busy = nullptr) noexcept;
  /// A block of `device` was taken in the legacy stream's order while old work on it may still run
  /// there: the watched streams' next work waits for the legacy work queued so far. False when a
  /// capture began meanwhile (no fence can be recorded for it then: the caller waits instead).
  [[nodiscard]] bool fence_later_work(int device) noexcept;
  /// Without the watch: makes every non-blocking stream of `device` wait for `legacy_event`.
  [[nodiscard]] bool fence_all(int device, CUevent legacy_event) noexcept;
  /// Calls `record(stream)` for each busy stream of `busy` under the lock that keeps streams from
  /// being destroyed meanwhile; false as soon as one returns false.
  template <class Record>
  bool record_on(std::vector<CUstream> const& busy, Record&& record)
  {
    std::lock_guard lock{mutex_};
    for (auto const stream : busy) {
      if (is_watched(stream) && !record(stream)) { return false; }  // a destroyed one drains
    }
    return true;
  }

  /// Whether every stream of `device` the program destroyed while it had work finished that work.
  [[nodiscard]] bool drained(int device) noexcept;
  /// Waits until they have.
  void wait_drained(int device) noexcept;

  // Captures.

  /// Stream captures in progress in the process: while any is, nothing is ordered on the legacy
  /// stream (work there would invalidate a capture of a blocking stream). `stream` with `thread`
  /// names a capture (`thread` tells the per-thread default streams apart, 0 for other streams).
  /// Noted before the capture may begin, checked when it may have ended (or did not begin):
  /// forgotten once the driver says the stream no longer captures.
  void capture_noted(CUstream stream, std::uint64_t thread) noexcept;
  void capture_checked(CUstream stream, std::uint64_t thread, capture_state now) noexcept;
  [[nodiscard]] bool capturing() const noexcept { return captures_.load(std::memory_order_seq_cst) > 0; }

  /// For the report: fences recorded on the legacy stream for watched streams, and waits for them.
  struct fence_counts {
    std::size_t recorded;
    std::size_t waited;
  };
  [[nodiscard]] fence_counts fences(int device) const noexcept;

  /// Slots of the table the hooks search: 8,192 handles in buckets of 8 (bucket_size).
  static constexpr std::size_t capacity = 8192;

 private:
  struct per_device {
    std::atomic<int> non_blocking{0};  // alive, or destroyed with work still running
    std::atomic<std::size_t> created{0};
    std::atomic<std::uint64_t> submissions{0};   // to its watched streams, counted after each
    std::atomic<std::uint64_t> idle_through{0};  // `submissions` when every one was last found idle
    std::atomic<std::uint64_t> generation{1};    // moved on before each legacy-order give-back
    std::mutex fence_mutex;
    CUevent fence{};                // recorded on the legacy stream; under fence_mutex
    std::uint64_t fence_covers{0};  // the generation it was recorded at; under fence_mutex
    std::atomic<std::size_t> fences_recorded{0};
    std::atomic<std::size_t> fences_waited{0};
  };
  struct draining_stream {
    CUevent done;  // recorded on the stream when the program destroyed it
    int device;
  };

  /// The table find() searches: buckets of `bucket_size` handles, scanned whole (no tombstones),
  /// each entry beside the record it names. A stream whose bucket is full is still kept (live_),
  /// but unseen by the hooks: the watch ends.
  static constexpr std::size_t bucket_size = 8;
  static constexpr std::size_t buckets     = capacity / bucket_size;
  [[nodiscard]] static std::size_t bucket_of(CUstream stream) noexcept;
  [[nodiscard]] watched* lookup(CUstream stream) noexcept;
  /// Lists a new non-blocking stream whose work waits behind generation `fenced_at`; false when its
  /// bucket of the table is full (it is still queried and fenced, but the hooks cannot find it).
  bool watch(CUstream stream, int device, std::uint64_t fenced_at);
  /// Records `d`'s fence for its generation now, unless it covers it already; fence_mutex held.
  bool record_fence(int device, per_device& d) noexcept;
  /// Makes `w`'s later work wait for the legacy work behind its device's generation.
  void fence(watched& w, per_device& d) noexcept;
  void forget_drained() noexcept;                           // mutex_ held
  void unlist(watched& w) noexcept;                         // mutex_ held
  [[nodiscard]] bool is_watched(CUstream stream) noexcept;  // mutex_ held

  std::atomic<bool> watching_{true};
  mutable std::mutex why_mutex_;
  std::string why_not_;

  mutable std::mutex mutex_;  // the table's writers, the records, the draining list, and events recorded on streams
  std::array<std::atomic<CUstream>, capacity> keys_{};
  std::array<watched*, capacity> entries_{};  // the record of keys_[i]; written before the key
  std::vector<watched*> live_;                // every non-blocking stream alive, under mutex_
  std::vector<watched*> spare_;               // records of destroyed streams, for reuse (never freed)
  std::atomic<std::size_t> live_count_{0};    // live_.size(), read without the lock
  std::vector<draining_stream> draining_;     // under mutex_
  std::atomic<int> draining_count_{0};        // its size, read without the lock
  std::array<per_device, max_devices> devices_;

  std::mutex captures_mutex_;
  std::vector<std::pair<CUstream, std::uint64_t>> capturing_;  // under captures_mutex_
  std::atomic<int> captures_{0};                               // its size, read without the lock
};

}  // namespace rmm::shim
