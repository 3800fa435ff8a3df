// SPDX-License-Identifier: Apache-2.0
// Streams: an in-order queue of host-executed operations, drained by the stream's own worker
// thread. Positions count operations; "stream S reached position P" is the unit of all ordering
// (events, cross-stream waits, stream-ordered frees).
#pragma once

#include "common.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace rmm_emu {

class Context;
class Stream;

// A point in a stream's history: reached once the stream has completed `pos` operations.
struct StreamPos {
  std::shared_ptr<Stream> stream;
  std::uint64_t pos = 0;

  bool reached() const;
  void wait() const;
};

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  enum class Kind { user, legacy, per_thread };

  Stream(Context& ctx, Kind kind, unsigned flags, int priority);
  Stream(Stream const&)            = delete;
  Stream& operator=(Stream const&) = delete;

  Context& context() const { return ctx_; }
  Kind kind() const { return kind_; }
  unsigned flags() const { return flags_; }
  int priority() const { return priority_; }
  std::uint64_t id() const { return id_; }
  // Blocking streams take part in the legacy default stream's implicit synchronization.
  bool blocking() const { return (flags_ & CU_STREAM_NON_BLOCKING) == 0; }

  // Appends an operation that runs once every dependency is reached. Use Context::enqueue, which
  // adds the legacy-stream dependencies; returns the operation's position.
  std::uint64_t push(std::function<void()> fn, std::vector<StreamPos> deps);

  std::uint64_t last_enqueued() const;
  std::uint64_t completed() const { return completed_.load(std::memory_order_acquire); }
  bool idle() const { return completed() >= last_enqueued(); }
  // Waits until the stream completed `pos` operations. A host thread (not a stream worker) counts
  // as a host waiter meanwhile (host_waiters()).
  void wait(std::uint64_t pos) const;

  // True when the next operation to run (the one the worker holds, or the head of the queue) waits
  // for a position of another stream that has not been reached.
  bool blocked_on_dependency() const;

  // No new handle-based work; the worker finishes what is queued, then leaves.
  void destroy();

  // Stream capture, as far as it matters to allocators: the status, and its invalidation when the
  // legacy stream would have to synchronize with a capturing blocking stream. Work submitted to a
  // capturing stream still runs (no graph is built).
  CUstreamCaptureStatus capture_status() const { return capture_.load(std::memory_order_acquire); }
  // False when the stream is capturing already.
  bool begin_capture();
  // The status the capture ended with (NONE: there was none).
  CUstreamCaptureStatus end_capture();
  void invalidate_capture();

 private:
  struct Op {
    std::uint64_t pos;
    std::vector<StreamPos> deps;
    std::function<void()> fn;
  };

  void run();

  Context& ctx_;
  Kind const kind_;
  unsigned const flags_;
  int const priority_;
  std::uint64_t const id_;

  mutable std::mutex m_;
  mutable std::condition_variable cv_;
  std::deque<Op> queue_;
  bool holding_op_ = false;              // the worker took an operation off the queue, not yet done
  std::vector<StreamPos> holding_deps_;  // its dependencies, until they are reached
  std::uint64_t enqueued_ = 0;
  std::atomic<std::uint64_t> completed_{0};
  bool worker_running_ = false;
  bool destroyed_      = false;
  std::atomic<CUstreamCaptureStatus> capture_{CU_STREAM_CAPTURE_STATUS_NONE};
};

// True on a stream worker thread (host functions run there; they must not block on streams).
bool on_stream_worker();

// Host threads currently blocked until some stream reaches a position (stream, event and device
// synchronization, cudaFree, synchronous copies and sets).
int host_waiters();

// Resolves a CUstream argument. 0 means the current context's legacy stream, or its per-thread
// default stream for the _ptsz/_ptds entry points; CU_STREAM_LEGACY / CU_STREAM_PER_THREAD name
// them explicitly; anything else must be a live stream from cuStreamCreate.
CUresult resolve_stream(CUstream handle, bool per_thread, std::shared_ptr<Stream>& out);

// Handle registry for streams created by cuStreamCreate*. A stream's handle is its address, or,
// while RMM_EMU_REUSE_STREAM_HANDLES is on, a recycled token: the handle of the stream destroyed
// last among those created with the knob on (as a driver may reuse the handle of a destroyed
// stream whose work is still queued).
CUstream register_stream(std::shared_ptr<Stream> s);
std::shared_ptr<Stream> unregister_stream(CUstream handle);  // null when unknown
void unregister_stream(Stream const& s);                     // whatever its handle

}  // namespace rmm_emu
