// SPDX-License-Identifier: Apache-2.0
// logging_resource_adaptor: the exact CSV format, where the log goes, completeness and order, and
// a round trip log -> parse -> replay that reproduces the logged statistics.
#include "allocation_log.hpp"
#include "sequential_replay.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using rmm::mr::logging_resource_adaptor;

std::vector<std::string> lines_of(std::string const& text)
{
  std::vector<std::string> lines;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);) { lines.push_back(line); }
  return lines;
}

std::string read_file(std::filesystem::path const& path)
{
  std::ifstream in{path};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

std::filesystem::path temp_log(std::string const& name)
{
  return std::filesystem::temp_directory_path() / fmt::format("rmm_logging_test_{}_{}.csv", ::getpid(), name);
}

/// Sets an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(char const* name, char const* value) : name_{name}
  {
    if (char const* old = std::getenv(name)) { old_ = old; }
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~scoped_env()
  {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  scoped_env(scoped_env const&)            = delete;
  scoped_env& operator=(scoped_env const&) = delete;

 private:
  char const* name_;
  std::optional<std::string> old_;
};

TEST(LoggingAdaptor, WritesTheHeaderAndOneExactRowPerEvent)
{
  std::ostringstream out;
  rmm::cuda_stream stream;
  void* ptr{};
  {
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, out};
    ptr = mr.allocate(stream, 1000);
    mr.deallocate(stream, ptr, 1000);
  }
  auto const lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3U) << out.str();
  EXPECT_EQ(lines[0], "Thread,Time,Action,Pointer,Size,Stream");
  EXPECT_EQ(lines[0], logging_resource_adaptor::header());
  auto const thread = std::to_string(::syscall(SYS_gettid));
  std::regex const row{R"((\d+),(\d\d):(\d\d):(\d\d)\.(\d{6}),([a-z ]+),(0x[0-9a-f]+),(\d+),(0x[0-9a-f]+))"};
  std::smatch match;
  ASSERT_TRUE(std::regex_match(lines[1], match, row)) << lines[1];
  EXPECT_EQ(match[1], thread);
  EXPECT_LT(std::stoi(match[2]), 24);
  EXPECT_LT(std::stoi(match[3]), 60);
  EXPECT_EQ(match[6], "allocate");
  EXPECT_EQ(match[7], fmt::format("{}", fmt::ptr(ptr)));
  EXPECT_EQ(match[8], "1000");
  EXPECT_EQ(match[9], fmt::format("{}", fmt::ptr(stream.value())));
  ASSERT_TRUE(std::regex_match(lines[2], match, row)) << lines[2];
  EXPECT_EQ(match[6], "free");
  EXPECT_EQ(match[7], fmt::format("{}", fmt::ptr(ptr)));
  EXPECT_EQ(match[8], "1000");
}

TEST(LoggingAdaptor, LogsAFailedAllocationAndStillThrows)
{
  std::ostringstream out;
  {
    logging_resource_adaptor mr{rmm::mr::limiting_resource_adaptor{rmm::mr::cuda_memory_resource{}, 1024}, out};
    EXPECT_THROW((void)mr.allocate_sync(4096), rmm::out_of_memory);
  }
  auto const lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 2U) << out.str();
  EXPECT_TRUE(lines[1].ends_with(",allocate failure,0x0,4096,0x0")) << lines[1];
}

TEST(LoggingAdaptor, TheDefaultStreamIsLoggedAsZero)
{
  std::ostringstream out;
  {
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, out};
    mr.deallocate_sync(mr.allocate_sync(256), 256);
  }
  for (auto const& line : lines_of(out.str())) {
    if (line.starts_with("Thread")) { continue; }
    EXPECT_TRUE(line.ends_with(",256,0x0")) << line;
  }
}

TEST(LoggingAdaptor, TakesTheFileFromRmmLogFileAndRefusesWithoutOne)
{
  auto const path = temp_log("env");
  {
    scoped_env env{"RMM_LOG_FILE", path.c_str()};
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
    mr.deallocate_sync(mr.allocate_sync(512), 512);
  }
  auto const lines = lines_of(read_file(path));
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_TRUE(lines[1].find(",allocate,") != std::string::npos) << lines[1];
  std::filesystem::remove(path);

  scoped_env unset{"RMM_LOG_FILE", nullptr};
  try {
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
    FAIL() << "constructed without a file";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("RMM_LOG_FILE"), std::string::npos) << e.what();
  }
}

TEST(LoggingAdaptor, AFileThatCannotBeOpenedIsAnErrorNamingIt)
{
  try {
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, "/nonexistent-dir/log.csv"};
    FAIL() << "constructed with an unwritable file";
  } catch (rmm::logic_error const& e) {
    std::string const message = e.what();
    EXPECT_NE(message.find("/nonexistent-dir/log.csv"), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
}

TEST(LoggingAdaptor, AFileNameWithANulCharacterIsRefused)
{
  // Opened as it stands, the name would end at the NUL and the log would go to the prefix.
  auto const prefix = temp_log("nul").string();
  std::filesystem::remove(prefix);
  std::string const name = prefix + std::string{"\0.csv", 5};
  try {
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, name};
    FAIL() << "constructed with a file name holding a NUL";
  } catch (rmm::logic_error const& e) {
    std::string const message = e.what();
    EXPECT_NE(message.find(prefix), std::string::npos) << message;
    EXPECT_NE(message.find("NUL"), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(prefix)) << "a file named by the text before the NUL was created";
  std::filesystem::remove(prefix);
}

TEST(LoggingAdaptor, EverySinkGetsTheSameLog)
{
  std::ostringstream first;
  std::ostringstream second;
  auto const path = temp_log("sinks");
  {
    logging_resource_adaptor mr{
      rmm::mr::cuda_memory_resource{},
      {std::make_shared<rmm::mr::ostream_log_sink>(first), std::make_shared<rmm::mr::ostream_log_sink>(second),
       std::make_shared<rmm::mr::file_log_sink>(path.string())}};
    for (int i = 0; i < 10; ++i) { mr.deallocate_sync(mr.allocate_sync(256 * (i + 1)), 256 * (i + 1)); }
  }
  EXPECT_EQ(lines_of(first.str()).size(), 21U);
  EXPECT_EQ(first.str(), second.str());
  EXPECT_EQ(first.str(), read_file(path));
  std::filesystem::remove(path);
  EXPECT_THROW((logging_resource_adaptor{rmm::mr::cuda_memory_resource{}, std::vector<rmm::mr::log_sink_ptr>{}}),
               rmm::logic_error);
}

// RMM's code passes the debug logger's sinks (rapids_logger's): they get the same CSV text.
TEST(LoggingAdaptor, DebugLoggerSinksGetTheSameLog)
{
  std::ostringstream reference;
  std::ostringstream through_logger_sink;
  auto const path = temp_log("logger-sinks");
  {
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{},
                                {std::make_shared<rapids_logger::ostream_sink_mt>(through_logger_sink),
                                 std::make_shared<rapids_logger::basic_file_sink_mt>(path.string(), true)}};
    logging_resource_adaptor plain{rmm::mr::cuda_memory_resource{}, reference};
    for (int i = 0; i < 5; ++i) {
      mr.deallocate_sync(mr.allocate_sync(512 * (i + 1)), 512 * (i + 1));
      plain.deallocate_sync(plain.allocate_sync(512 * (i + 1)), 512 * (i + 1));
    }
  }
  EXPECT_EQ(lines_of(through_logger_sink.str()).size(), 11U);
  EXPECT_EQ(through_logger_sink.str(), read_file(path));
  EXPECT_EQ(lines_of(through_logger_sink.str()).front(), lines_of(reference.str()).front()) << "the same header";
  std::filesystem::remove(path);
  EXPECT_THROW((logging_resource_adaptor{rmm::mr::cuda_memory_resource{}, std::vector<rmm::logger_sink_ptr>{nullptr}}),
               rmm::logic_error);
}

TEST(LoggingAdaptor, ASinkThrowingAnythingIsReportedOnceAndTheOtherSinksKeepTheWholeLog)
{
  // Not a std::exception: the writer is noexcept, so letting it escape would end the program.
  struct throwing_sink final : rmm::mr::log_sink {
    void write(std::string_view) override { throw 42; }
    void flush() override { throw 42; }
  };
  std::ostringstream kept;
  testing::internal::CaptureStderr();
  {
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{},
                                {std::make_shared<throwing_sink>(), std::make_shared<rmm::mr::ostream_log_sink>(kept)}};
    for (int i = 0; i < 10; ++i) { mr.deallocate_sync(mr.allocate_sync(256), 256); }
    mr.flush();
  }
  auto const reported = testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines_of(kept.str()).size(), 21U);
  auto const first = reported.find("not a std::exception");
  ASSERT_NE(first, std::string::npos) << reported;
  EXPECT_EQ(reported.find("not a std::exception", first + 1), std::string::npos) << "reported more than once";
}

TEST(LoggingAdaptor, FlushMakesEveryEventVisibleAndAutoFlushNeedsNoCall)
{
  std::ostringstream buffered;
  logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, buffered};
  void* p = mr.allocate_sync(256);
  mr.flush();
  EXPECT_EQ(lines_of(buffered.str()).size(), 2U);
  mr.deallocate_sync(p, 256);
  mr.flush();
  EXPECT_EQ(lines_of(buffered.str()).size(), 3U);

  std::ostringstream immediate;
  logging_resource_adaptor auto_flushed{rmm::mr::cuda_memory_resource{}, immediate, true};
  void* q = auto_flushed.allocate_sync(256);
  EXPECT_EQ(lines_of(immediate.str()).size(), 2U);
  auto_flushed.deallocate_sync(q, 256);
  EXPECT_EQ(lines_of(immediate.str()).size(), 3U);
}

TEST(LoggingAdaptor, ManyThreadsLoseNothingAndAFreeAlwaysPrecedesTheReuseOfItsAddress)
{
  std::ostringstream out;
  constexpr int threads = 8;
  constexpr int rounds  = 5000;  // more than a writer batch
  {
    logging_resource_adaptor mr{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}, out};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&mr] {
        for (int i = 0; i < rounds; ++i) { mr.deallocate_sync(mr.allocate_sync(4096), 4096); }
      });
    }
    for (auto& w : workers) { w.join(); }
  }
  auto const events = rmm::trace::parse_log(out.str(), "threads.csv");  // rejects a reused live pointer
  EXPECT_EQ(events.size(), std::size_t{2} * threads * rounds);
  std::set<std::uint64_t> thread_ids;
  for (auto const& e : events) { thread_ids.insert(e.thread); }
  EXPECT_EQ(thread_ids.size(), static_cast<std::size_t>(threads));
  // Replaying it checks that every free names a live pointer, i.e. the order is right.
  rmm::mr::cuda_memory_resource cuda;
  auto const result = rmm::trace::replay_sequential(events, cuda);
  EXPECT_EQ(result.allocations, std::size_t{threads} * rounds);
}

/// A sink that takes its time, as a slow disk would, and counts the rows it was given.
class slow_sink final : public rmm::mr::log_sink {
 public:
  void write(std::string_view text) override
  {
    {
      std::lock_guard lock{mutex_};
      text_.append(text);
      rows_ += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
  }
  void flush() override {}
  [[nodiscard]] std::size_t rows()
  {
    std::lock_guard lock{mutex_};
    return rows_;
  }
  [[nodiscard]] std::string text()
  {
    std::lock_guard lock{mutex_};
    return text_;
  }

 private:
  std::mutex mutex_;
  std::string text_;
  std::size_t rows_{0};
};

TEST(LoggingAdaptor, AThreadFarAheadOfASlowWriterIsHeldBackAndLosesNothing)
{
  auto sink                   = std::make_shared<slow_sink>();
  constexpr std::size_t most  = rmm::mr::logging_resource_adaptor::max_buffered_events;
  constexpr std::size_t pairs = 3 * most / 2;
  std::size_t largest_backlog = 0;
  {
    logging_resource_adaptor mr{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0},
                                std::vector<rmm::mr::log_sink_ptr>{sink}};
    for (std::size_t i = 1; i <= pairs; ++i) {
      mr.deallocate_sync(mr.allocate_sync(256), 256);
      if (i % 256 == 0) {
        auto const written = sink->rows() - 1;  // the header is one row
        largest_backlog    = std::max(largest_backlog, 2 * i - written);
      }
    }
  }
  // Whatever the writer thread is doing: the thread's own buffer, and one round being written.
  EXPECT_LE(largest_backlog, 2 * most + 512) << "events recorded and not yet written";
  auto const events = rmm::trace::parse_log(sink->text(), "slow.csv");  // rejects a reused live pointer
  EXPECT_EQ(events.size(), 2 * pairs);
}

TEST(LoggingAdaptor, AnEventFromAThreadLocalDestructorIsLogged)
{
  std::ostringstream out;
  logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, out};
  std::thread{[&mr] {
    struct freer {
      logging_resource_adaptor* mr{nullptr};
      void* ptr{nullptr};
      ~freer()
      {
        if (ptr != nullptr) { mr->deallocate_sync(ptr, 256); }
      }
    };
    // Made before the thread's first event: destroyed after the log's own thread-locals.
    thread_local freer at_exit;
    at_exit.mr  = &mr;
    at_exit.ptr = mr.allocate_sync(256);
  }}.join();
  mr.flush();
  auto const events = rmm::trace::parse_log(out.str(), "late.csv");
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[1].kind, rmm::trace::action::free);
  EXPECT_EQ(events[1].pointer, events[0].pointer);
}

TEST(LoggingAdaptor, AForkedChildThatExitsDoesNotWriteTheParentsRowsAgain)
{
  auto const path =
    (std::filesystem::temp_directory_path() / ("rmm_fork_log_" + std::to_string(::getpid()) + ".csv")).string();
  constexpr int pairs = 10;
  {
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, path};
    for (int i = 0; i < pairs; ++i) { mr.deallocate_sync(mr.allocate_sync(256), 256); }
    std::this_thread::sleep_for(std::chrono::milliseconds{300});  // a writer round, not followed by a flush
    pid_t const child = ::fork();
    if (child == 0) {
      std::fflush(nullptr);  // what exit() does to the C library's buffers
      ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::ifstream file{path};
  std::stringstream text;
  text << file.rdbuf();
  std::filesystem::remove(path);
  auto const events = rmm::trace::parse_log(text.str(), path);
  EXPECT_EQ(events.size(), std::size_t{2} * pairs) << "each row once";
}

TEST(LoggingAdaptor, ReplayingTheLogReproducesTheStatistics)
{
  std::ostringstream out;
  rmm::mr::statistics_resource_adaptor logged_stats{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  {
    logging_resource_adaptor mr{logged_stats, out};
    rmm::cuda_stream other;
    std::mt19937_64 rng{7};
    std::vector<std::tuple<void*, std::size_t, rmm::cuda_stream_view>> live;
    for (int step = 0; step < 3000; ++step) {
      if (live.empty() || rng() % 5 < 3) {
        std::size_t const size             = (rng() % 4096) * 256 + rng() % 256;
        rmm::cuda_stream_view const stream = rng() % 2 ? rmm::cuda_stream_view{} : other.view();
        live.emplace_back(mr.allocate(stream, size), size, stream);
      } else {
        auto const victim        = rng() % live.size();
        auto [ptr, size, stream] = live[victim];
        live[victim]             = live.back();
        live.pop_back();
        mr.deallocate(stream, ptr, size);
      }
    }
    for (auto [ptr, size, stream] : live) { mr.deallocate(stream, ptr, size); }
    other.synchronize();
  }
  auto const events = rmm::trace::parse_log(out.str(), "round_trip.csv");
  rmm::mr::statistics_resource_adaptor replayed_stats{
    rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  (void)rmm::trace::replay_sequential(events, replayed_stats);

  auto const logged   = logged_stats.get_bytes_counter();
  auto const replayed = replayed_stats.get_bytes_counter();
  EXPECT_EQ(replayed.value, logged.value);
  EXPECT_EQ(replayed.peak, logged.peak);
  EXPECT_EQ(replayed.total, logged.total);
  EXPECT_EQ(replayed_stats.get_allocations_counter().total, logged_stats.get_allocations_counter().total);
  EXPECT_EQ(replayed_stats.get_allocations_counter().peak, logged_stats.get_allocations_counter().peak);
}

TEST(LoggingAdaptor, CopiesShareTheLog)
{
  std::ostringstream out;
  {
    logging_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, out};
    auto copy = mr;
    EXPECT_TRUE(copy == mr);
    copy.deallocate_sync(mr.allocate_sync(256), 256);
  }
  EXPECT_EQ(lines_of(out.str()).size(), 3U);
}

}  // namespace
