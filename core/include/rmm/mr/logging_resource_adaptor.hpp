// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/detail/adaptor_resource.hpp>
#include <rmm/mr/log_sink.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace rmm::mr {

namespace detail {
class event_log_writer;
}

/**
 * Writes one CSV row per allocation event of its upstream:
 *
 *   Thread,Time,Action,Pointer,Size,Stream   (<rmm/mr/allocation_log_format.hpp>)
 *   4711,14:02:07.125031,allocate,0x7f2107e00000,37632,0x0
 *
 * Thread is the OS thread id, Time the local time of day with microseconds, Action one of
 * `allocate`, `allocate failure` (Pointer 0x0; the exception still reaches the caller) and
 * `free`; Pointer and Stream are hex. rmm-replay and RMM's replay benchmark read these logs.
 *
 * Logging is cheap on the allocating thread: it appends a fixed-size record to a buffer; a
 * writer thread formats the records and writes them. The log is complete once flush() returns
 * and when the last copy of the adaptor is destroyed. With `auto_flush` every call also writes
 * and flushes its row before returning (for logs that must survive a crash; much slower).
 * A free is logged before it reaches the upstream and an allocation after, so a row freeing an
 * address always precedes the row that hands it out again.
 *
 * Copies share the log and compare equal.
 */
class logging_resource_adaptor final
  : public detail::adaptor_resource<logging_resource_adaptor, detail::event_log_writer> {
 public:
  /**
   * @brief Logs to the file `filename` (truncated), by default the one RMM_LOG_FILE names.
   *
   * @param upstream the resource whose allocation events are logged
   * @param filename the log file (default: default_log_file())
   * @param auto_flush write and flush every row before the call that logs it returns
   * @throws rmm::logic_error when no name is given and RMM_LOG_FILE is not set, or the file cannot
   * be opened
   */
  explicit logging_resource_adaptor(any_device_resource upstream,
                                    std::string const& filename = default_log_file(),
                                    bool auto_flush             = false);
  /**
   * @brief Logs to `stream`, which must outlive the adaptor.
   *
   * @param upstream the resource whose allocation events are logged
   * @param stream the stream the rows are written to
   * @param auto_flush write and flush every row before the call that logs it returns
   */
  logging_resource_adaptor(any_device_resource upstream, std::ostream& stream, bool auto_flush = false);
  /**
   * @brief Logs to every sink in `sinks` (at least one).
   *
   * @param upstream the resource whose allocation events are logged
   * @param sinks where the rows are written; none may be null
   * @param auto_flush write and flush every row before the call that logs it returns
   * @throws rmm::logic_error when `sinks` is empty or holds a null sink
   */
  logging_resource_adaptor(any_device_resource upstream, std::vector<log_sink_ptr> sinks, bool auto_flush = false);
  /**
   * @brief Logs to debug-logger sinks, as RMM's code passes rapids_logger sinks
   * (`{std::make_shared<rapids_logger::basic_file_sink_mt>(path, true), ...}`): each gets the CSV
   * text as a log_sink would.
   *
   * @param upstream the resource whose allocation events are logged
   * @param sinks where the rows are written (at least one); none may be null
   * @param auto_flush write and flush every row before the call that logs it returns
   * @throws rmm::logic_error when `sinks` is empty or holds a null sink
   */
  logging_resource_adaptor(any_device_resource upstream,
                           std::vector<logger_sink_ptr> const& sinks,
                           bool auto_flush = false);

  /// @brief Writes every event logged so far and flushes the sinks. Sink failures go to the debug log.
  void flush();

  /// @brief Events one thread may have waiting for the writer thread: a thread that gets this far
  /// ahead of it (a slow sink, a burst of calls) writes the rows itself, so memory stays bounded.
  static constexpr std::size_t max_buffered_events = 65536;

  /**
   * @brief The log's first line, without its newline.
   *
   * @return "Thread,Time,Action,Pointer,Size,Stream"
   */
  [[nodiscard]] static std::string header();

  /**
   * @brief The log file a logging_resource_adaptor constructed without one writes to.
   *
   * @return the value of RMM_LOG_FILE
   * @throws rmm::logic_error when RMM_LOG_FILE is not set or empty
   */
  [[nodiscard]] static std::string default_log_file();

 private:
  friend detail::adaptor_resource<logging_resource_adaptor, detail::event_log_writer>;
  /// The adaptor's work, once for both orders.
  void* allocate_in(std::size_t bytes, detail::allocation_order order);
  void deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept;
};

static_assert(cuda::mr::resource_with<logging_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
