// SPDX-License-Identifier: Apache-2.0
#include "event_log_writer.hpp"

#include <rmm/detail/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <ctime>
#include <exception>
#include <iterator>
#include <utility>

#include <sys/syscall.h>
#include <unistd.h>

namespace rmm::mr::detail {

static_assert(event_log_writer::max_buffered == logging_resource_adaptor::max_buffered_events,
              "the adaptor documents the writer's bound");

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

/// Formats rows: `thread,HH:MM:SS.uuuuuu,action,0xpointer,size,0xstream`. The writer formats every
/// event of every thread, so each row is a handful of integer conversions into one buffer; the
/// local time of day is converted once per second of log, not once per row.
class row_formatter {
 public:
  void append(std::string& out, log_event const& e)
  {
    decimal(out, e.thread);
    out.push_back(',');
    time_of_day(out, e.time_ns);
    out.push_back(',');
    out.append(rmm::mr::allocation_log::action_name(e.action));
    out.push_back(',');
    hex(out, reinterpret_cast<std::uintptr_t>(e.pointer));
    out.push_back(',');
    decimal(out, e.size);
    out.push_back(',');
    hex(out, reinterpret_cast<std::uintptr_t>(e.stream));
    out.push_back('\n');
  }

 private:
  static void decimal(std::string& out, std::uint64_t value)
  {
    char digits[20];
    auto const end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
    out.append(digits, static_cast<std::size_t>(end - digits));
  }

  static void hex(std::string& out, std::uintptr_t value)
  {
    char digits[16];
    auto const end = std::to_chars(digits, digits + sizeof(digits), value, 16).ptr;
    out.append("0x", 2);
    out.append(digits, static_cast<std::size_t>(end - digits));
  }

  void time_of_day(std::string& out, std::int64_t time_ns)
  {
    auto const seconds = static_cast<std::time_t>(time_ns / 1'000'000'000);
    if (seconds != cached_second_) {
      std::tm local{};
      ::localtime_r(&seconds, &local);
      two_digits(cached_text_, local.tm_hour);
      cached_text_[2] = ':';
      two_digits(cached_text_ + 3, local.tm_min);
      cached_text_[5] = ':';
      two_digits(cached_text_ + 6, local.tm_sec);
      cached_second_ = seconds;
    }
    char fraction[7] = {'.'};
    auto micros      = static_cast<int>((time_ns % 1'000'000'000) / 1000);
    for (int digit = 6; digit >= 1; --digit) {  // always six digits
      fraction[digit] = static_cast<char>('0' + micros % 10);
      micros /= 10;
    }
    out.append(cached_text_, sizeof(cached_text_));
    out.append(fraction, sizeof(fraction));
  }

  static void two_digits(char* at, int value)
  {
    at[0] = static_cast<char>('0' + value / 10);
    at[1] = static_cast<char>('0' + value % 10);
  }

  std::time_t cached_second_{-1};
  char cached_text_[8]{};
};

}  // namespace

namespace {

/// Numbers the writers, so that a thread's cached buffer never matches a later writer.
std::uint64_t next_writer_id() noexcept
{
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

event_log_writer::event_log_writer(std::vector<log_sink_ptr> sinks, bool auto_flush)
  : sinks_{std::move(sinks)}, auto_flush_{auto_flush}, id_{next_writer_id()}, owner_pid_{::getpid()}
{
  RMM_EXPECTS(!sinks_.empty(), "logging_resource_adaptor: no sinks given; pass at least one");
  for (auto const& sink : sinks_) { RMM_EXPECTS(sink != nullptr, "logging_resource_adaptor: a sink is null"); }
  buffers_.push_back(shared_buffer_);  // always held by the writer too: never dropped
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
      std::lock_guard lock{wake_mutex_};
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

namespace {

/// What a thread keeps of its buffers: a share of each (so that a buffer outlives neither its
/// thread's use of it nor the writer's last round over it), and the last one used, reached
/// without a guard. When the thread's thread-locals are destroyed, `ended` tells a later event of
/// the same thread (a free in another thread-local's destructor) to use its writer's shared buffer.
struct thread_buffers {
  struct owned {
    std::uint64_t writer;
    std::shared_ptr<void> buffer;
  };
  std::vector<owned> mine;
  ~thread_buffers();
};

thread_local std::uint64_t last_writer = 0;
thread_local void* last_buffer         = nullptr;
thread_local bool buffers_ended        = false;

thread_buffers::~thread_buffers()
{
  last_writer   = 0;
  last_buffer   = nullptr;
  buffers_ended = true;
}

}  // namespace

auto event_log_writer::buffer_of_this_thread() -> thread_buffer&
{
  if (last_writer == id_) [[likely]] { return *static_cast<thread_buffer*>(last_buffer); }
  if (buffers_ended) { return *shared_buffer_; }
  thread_local thread_buffers buffers;
  auto& mine = buffers.mine;
  auto found = std::find_if(mine.begin(), mine.end(), [this](auto const& o) { return o.writer == id_; });
  if (found == mine.end()) {
    // Buffers of writers that are gone (only this thread still holds them) are dropped first.
    std::erase_if(mine, [](auto const& o) { return o.buffer.use_count() == 1; });
    auto buffer = std::make_shared<thread_buffer>();
    mine.reserve(mine.size() + 1);
    {
      std::lock_guard lock{buffers_mutex_};
      buffers_.push_back(buffer);
    }
    mine.push_back({id_, std::move(buffer)});  // capacity reserved: does not throw
    found = std::prev(mine.end());
  }
  last_writer = id_;
  last_buffer = found->buffer.get();
  return *static_cast<thread_buffer*>(last_buffer);
}

void event_log_writer::record(log_action action,
                              void const* pointer,
                              std::size_t size,
                              cuda_stream_view stream) noexcept
{
  bool wake{false};
  bool help{false};
  try {
    auto& buffer = buffer_of_this_thread();
    std::lock_guard lock{buffer.lock};
    if (buffer.events.size() == buffer.events.capacity()) {
      buffer.events.reserve(std::max<std::size_t>(256, 2 * buffer.events.size()));
    }
    // Numbered only once the event has room: every number taken is an event in a buffer.
    auto const number = next_number_.fetch_add(1, std::memory_order_relaxed);
    buffer.events.push_back({number, os_thread_id(), now_ns(), pointer, size, stream.value(), action});
    wake = buffer.events.size() == batch_size;
    help = number - written_below_.load(std::memory_order_relaxed) >= max_buffered;
  } catch (...) {
    lost_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (auto_flush_) {
    flush();
  } else if (help) {
    write_pending();  // the writer falls behind: this thread writes too, rather than buffer without bound
  } else if (wake) {
    batch_ready_.store(true, std::memory_order_relaxed);
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
  std::unique_lock lock{wake_mutex_};
  while (!stopping_) {
    wake_writer_.wait_for(lock, std::chrono::milliseconds{100},
                          [this] { return stopping_ || batch_ready_.load(std::memory_order_relaxed); });
    batch_ready_.store(false, std::memory_order_relaxed);
    lock.unlock();
    write_pending();
    lock.lock();
  }
}

void event_log_writer::write_pending() noexcept
{
  std::lock_guard write_lock{write_mutex_};
  // Every event numbered below this count is in a buffer by the time the buffer's lock is taken
  // below: a thread numbers its event and appends it under that lock.
  auto const count = next_number_.load(std::memory_order_relaxed);
  std::vector<std::vector<log_event>> taken;
  {
    std::lock_guard lock{buffers_mutex_};
    try {
      taken.reserve(buffers_.size());
    } catch (...) {
      return;  // out of host memory: the events wait in their buffers for the next round
    }
    std::erase_if(buffers_, [&taken](auto const& buffer) {
      std::lock_guard buffer_lock{buffer->lock};
      if (!buffer->events.empty()) {
        taken.emplace_back().swap(buffer->events);  // the thread allocates anew: nothing to copy here
      }
      // A buffer no thread holds any more (its thread ended) goes once emptied. Read under its
      // lock: the thread's last event, appended under it, is in `taken` by now.
      return buffer.use_count() == 1;
    });
  }
  for (auto& events : taken) {
    try {
      waiting_.insert(waiting_.end(), events.begin(), events.end());
    } catch (...) {
      lost_.fetch_add(events.size(), std::memory_order_relaxed);
    }
  }
  std::sort(waiting_.begin(), waiting_.end(),
            [](log_event const& a, log_event const& b) { return a.number < b.number; });
  auto const ready =
    std::partition_point(waiting_.begin(), waiting_.end(), [count](log_event const& e) { return e.number < count; });
  if (ready == waiting_.begin()) { return; }
  try {
    row_formatter rows;
    text_.clear();
    for (auto it = waiting_.begin(); it != ready; ++it) { rows.append(text_, *it); }
    write_to_sinks(text_);
  } catch (...) {
    lost_.fetch_add(static_cast<std::size_t>(ready - waiting_.begin()), std::memory_order_relaxed);
  }
  waiting_.erase(waiting_.begin(), ready);
  written_below_.store(count, std::memory_order_relaxed);
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
