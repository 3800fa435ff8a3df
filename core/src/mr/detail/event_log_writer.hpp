// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "light_mutex.hpp"

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/allocation_log_format.hpp>
#include <rmm/mr/log_sink.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

namespace rmm::mr::detail {

using log_action = rmm::mr::allocation_log::action;

/// One logged event as captured on the recording thread: no formatting, no allocation.
struct log_event {
  std::uint64_t number;  ///< the event's place in the log
  std::uint64_t thread;
  std::int64_t time_ns;  ///< system clock
  void const* pointer;
  std::size_t size;
  cudaStream_t stream;
  log_action action;
};

/**
 * The logging adaptor's buffers and writer thread. Each recording thread appends to a buffer of
 * its own, whose lock only a thread writing a round contends for, and numbers its event from one
 * shared counter: the numbers order the events of every thread as the program made them (a free is
 * numbered before its block goes back, an allocation after its block was taken). The writer
 * thread wakes every 100 ms, or when a buffer holds a batch, takes what the buffers hold, and
 * writes it as CSV rows in number order up to the count it read before taking them: an event
 * numbered later may still be on its way into a buffer, and waits for the next round. When the
 * log gets max_buffered events ahead of what was written, the thread that numbers an event writes
 * a round itself. A thread whose thread-locals are already destroyed (an event from another
 * thread-local's destructor) appends to the writer's shared buffer.
 */
class event_log_writer {
 public:
  /// Writes the header to every sink. Throws rmm::logic_error if `sinks` is empty or holds null.
  event_log_writer(std::vector<log_sink_ptr> sinks, bool auto_flush);
  /// Writes what is left, flushes, and reports events that could not be written.
  ~event_log_writer();
  event_log_writer(event_log_writer const&)            = delete;
  event_log_writer& operator=(event_log_writer const&) = delete;
  event_log_writer(event_log_writer&&)                 = delete;
  event_log_writer& operator=(event_log_writer&&)      = delete;

  void record(log_action action, void const* pointer, std::size_t size, cuda_stream_view stream) noexcept;
  /// Writes everything recorded so far and flushes the sinks.
  void flush() noexcept;

  static constexpr std::size_t batch_size = 4096;
  /// Events numbered and not yet written, beyond which the recording thread writes a round itself:
  /// the writer thread cannot keep up, and buffering would grow without bound.
  static constexpr std::size_t max_buffered = 16 * batch_size;

 private:
  struct thread_buffer {
    light_mutex lock;
    std::vector<log_event> events;  ///< under lock
  };

  /// The calling thread's buffer, made and registered on its first event. Throws std::bad_alloc.
  thread_buffer& buffer_of_this_thread();
  void run_writer();
  void write_pending() noexcept;  ///< takes the buffers' events and writes those it may (holds write_mutex_)
  void write_to_sinks(std::string_view text) noexcept;
  void flush_sinks() noexcept;

  std::vector<log_sink_ptr> sinks_;
  bool const auto_flush_;
  std::uint64_t const id_;  ///< never reused: a thread finds its buffer by it

  std::atomic<std::uint64_t> next_number_{0};
  std::atomic<std::uint64_t> written_below_{0};  ///< every event numbered below was written (or lost)
  std::mutex buffers_mutex_;                     ///< guards buffers_: a thread's first event, and the writer's rounds
  std::vector<std::shared_ptr<thread_buffer>> buffers_;  ///< shared with the recording threads
  /// For the events of threads whose own buffers are gone (their thread-locals were destroyed).
  std::shared_ptr<thread_buffer> shared_buffer_{std::make_shared<thread_buffer>()};
  std::atomic<std::size_t> lost_{0};  ///< events that could not be buffered (out of host memory)

  std::mutex wake_mutex_;  ///< guards stopping_; the writer sleeps on it
  std::condition_variable wake_writer_;
  bool stopping_{false};
  std::atomic<bool> batch_ready_{false};

  std::mutex write_mutex_;          ///< one writer at a time, so rows keep their order
  std::vector<log_event> waiting_;  ///< taken from the buffers, numbered beyond the last round's count
  std::string text_;                ///< formatted rows of one round
  bool write_failed_{false};

  pid_t owner_pid_;
  std::thread writer_;
};

}  // namespace rmm::mr::detail
