#include "event_log_writer.hpp"

#include <rmm/detail/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <exception>
#include <iterator>
#include <utility>

#include <sys/syscall.h>
#include <unistd.h>

namespace rmm::mr::detail {

namespace {

std::uint64_t os_thread_id() noexcept
{
  thread_local std::uint64_t const id = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  return id;
}

std::int64_t now_ns() noexcept
{
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

/// Local "HH:MM:SS" of a time, converted once per second of log rather than once per row.
class time_of_day_formatter {
 public:
  void append(std::string& out, std::int64_t time_ns)
  {
    auto const seconds = static_cast<std::time_t>(time_ns / 1'000'000'000);
    if (seconds != cached_second_) {
      std::tm local{};
      ::localtime_r(&seconds, &local);
      fmt::format_to(cached_text_, "{:02}:{:02}:{:02}", local.tm_hour, local.tm_min, local.tm_sec);
      cached_second_ = seconds;
    }
    out.append(cached_text_, 8);
    fmt::format_to(std::back_inserter(out), ".{:06}", (time_ns % 1'000'000'000) / 1000);
  }

 private:
  std::time_t cached_second_{-1};
  char cached_text_[8]{};
};

}  // namespace

event_log_writer::event_log_writer(std::vector<log_sink_ptr> sinks, bool auto_flush)
  : sinks_{std::move(sinks)}, auto_flush_{auto_flush}, owner_pid_{::getpid()}
{
  RMM_EXPECTS(!sinks_.empty(), "logging_resource_adaptor: no sinks given; pass at least one");
  for (auto const& sink : sinks_) { RMM_EXPECTS(sink != nullptr, "logging_resource_adaptor: a sink is null"); }
  pending_.reserve(batch_size);
  writing_.reserve(batch_size);
  write_to_sinks(logging_resource_adaptor::header() + '\n');
  flush_sinks();
  if (!auto_flush_) {
    writer_ = std::thread{[this] { run_writer(); }};
  }
}

event_log_writer::~event_log_writer()
{
  if (writer_.joinable()) {
    {
      std::lock_guard lock{queue_mutex_};
      stopping_ = true;
    }
    wake_writer_.notify_one();
    // A forked child has no copy of the writer thread: write from here instead of waiting for it.
    if (::getpid() == owner_pid_) {
      writer_.join();
    } else {
      writer_.detach();
    }
  }
  flush();
  if (auto const lost = lost_.load(); lost > 0) {
    RMM_LOG_ERROR(
      "logging_resource_adaptor: {} events could not be buffered (out of host memory) and are missing "
      "from the log",
      lost);
  }
}

void event_log_writer::record(log_action action,
                              void const* pointer,
                              std::size_t size,
                              cuda_stream_view stream) noexcept
{
  log_event const event{os_thread_id(), now_ns(), pointer, size, stream.value(), action};
  bool wake{false};
  try {
    std::lock_guard lock{queue_mutex_};
    pending_.push_back(event);
    wake = pending_.size() == batch_size;
  } catch (...) {
    lost_.fetch_add(1, std::memory_order_relaxed);
  }
  if (auto_flush_) {
    flush();
  } else if (wake) {
    wake_writer_.notify_one();
  }
}

void event_log_writer::flush() noexcept
{
  write_pending();
  std::lock_guard write_lock{write_mutex_};
  flush_sinks();
}

void event_log_writer::run_writer()
{
  std::unique_lock lock{queue_mutex_};
  while (!stopping_) {
    wake_writer_.wait_for(lock, std::chrono::milliseconds{100},
                          [this] { return stopping_ || pending_.size() >= batch_size; });
    lock.unlock();
    write_pending();
    lock.lock();
  }
}

void event_log_writer::write_pending() noexcept
{
  std::lock_guard write_lock{write_mutex_};
  {
    std::lock_guard lock{queue_mutex_};
    pending_.swap(writing_);
  }
  if (writing_.empty()) { return; }
  try {
    time_of_day_formatter time_of_day;
    text_.clear();
    for (auto const& event : writing_) {
      fmt::format_to(std::back_inserter(text_), "{},", event.thread);
      time_of_day.append(text_, event.time_ns);
      fmt::format_to(std::back_inserter(text_), ",{},{},{},{}\n", rmm::mr::allocation_log::action_name(event.action),
                     fmt::ptr(event.pointer), event.size, fmt::ptr(event.stream));
    }
    write_to_sinks(text_);
  } catch (...) {
    lost_.fetch_add(writing_.size(), std::memory_order_relaxed);
  }
  writing_.clear();
}

namespace {

/// Calls `operation(sink)` on every sink. A failure is reported once, whatever the sink throws (a
/// full disk would otherwise repeat it for every batch); `failed` remembers that it was.
template <class Operation>
void on_every_sink(std::vector<log_sink_ptr> const& sinks,
                   bool& failed,
                   char const* consequence,
                   Operation&& operation) noexcept
{
  for (auto const& sink : sinks) {
    try {
      operation(*sink);
    } catch (std::exception const& error) {
      if (!std::exchange(failed, true)) {
        RMM_LOG_ERROR("logging_resource_adaptor: {}; {}", error.what(), consequence);
      }
    } catch (...) {
      if (!std::exchange(failed, true)) {
        RMM_LOG_ERROR("logging_resource_adaptor: a log sink threw something that is not a std::exception; {}",
                      consequence);
      }
    }
  }
}

}  // namespace

void event_log_writer::write_to_sinks(std::string_view text) noexcept
{
  on_every_sink(sinks_, write_failed_, "the log is incomplete from here on",
                [text](log_sink& sink) { sink.write(text); });
}

void event_log_writer::flush_sinks() noexcept
{
  on_every_sink(sinks_, write_failed_, "the log is incomplete", [](log_sink& sink) { sink.flush(); });
}

}  // namespace rmm::mr::detail
