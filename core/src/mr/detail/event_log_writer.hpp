#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/allocation_log_format.hpp>
#include <rmm/mr/log_sink.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

namespace rmm::mr::detail {

using log_action = rmm::mr::allocation_log::action;

/// One logged event as captured on the allocating thread: no formatting, no allocation.
struct log_event {
  std::uint64_t thread;
  std::int64_t time_ns;  ///< system clock
  void const* pointer;
  std::size_t size;
  cudaStream_t stream;
  log_action action;
};

/**
 * The logging adaptor's buffer and writer thread. record() appends an event under a short lock;
 * the writer thread wakes when a batch is full or every 100 ms, formats the events as CSV rows
 * and writes them to the sinks in the order they were recorded.
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

 private:
  void run_writer();
  void write_pending() noexcept;  ///< formats and writes the pending events (holds write_mutex_)
  void write_to_sinks(std::string_view text) noexcept;
  void flush_sinks() noexcept;

  std::vector<log_sink_ptr> sinks_;
  bool const auto_flush_;

  std::mutex queue_mutex_;  ///< guards pending_ and stopping_; taken on the allocating threads
  std::condition_variable wake_writer_;
  std::vector<log_event> pending_;
  bool stopping_{false};
  std::atomic<std::size_t> lost_{0};  ///< events that could not be buffered (out of host memory)

  std::mutex write_mutex_;          ///< one writer at a time, so rows keep their order
  std::vector<log_event> writing_;  ///< swapped with pending_, keeps its capacity
  std::string text_;                ///< formatted rows of one batch
  bool write_failed_{false};

  pid_t owner_pid_;
  std::thread writer_;
};

}  // namespace rmm::mr::detail
