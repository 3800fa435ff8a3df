// SPDX-License-Identifier: Apache-2.0
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/logger_sinks.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string read_file(std::filesystem::path const& path)
{
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path temp_path(std::string const& name)
{
  return std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()));
}

TEST(Logger, FiltersByLevelAndFormatsLines)
{
  auto const path = temp_path("rmm_logger_test.log");
  std::filesystem::remove(path);
  {
    rmm::logger log{"unit", path.string()};
    EXPECT_EQ(log.level(), rmm::level_enum::info);
    log.debug("hidden {}", 1);
    log.info("shown {}", 2);
    log.set_level(rmm::level_enum::trace);
    log.trace("trace {}", 3);
    log.set_level(rmm::level_enum::off);
    log.critical("never");
    log.flush();
  }
  auto const text = read_file(path);
  EXPECT_THAT(text, Not(HasSubstr("hidden")));
  EXPECT_THAT(text, HasSubstr("[unit] [info] [pid "));
  EXPECT_THAT(text, HasSubstr("shown 2"));
  EXPECT_THAT(text, HasSubstr("[trace]"));
  EXPECT_THAT(text, Not(HasSubstr("never")));
  std::filesystem::remove(path);
}

TEST(Logger, AppendsRatherThanTruncating)
{
  auto const path = temp_path("rmm_logger_append.log");
  std::filesystem::remove(path);
  for (int i = 0; i < 2; ++i) {
    rmm::logger log{"unit", path.string()};
    log.warn("line {}", i);
  }
  auto const text = read_file(path);
  EXPECT_THAT(text, HasSubstr("line 0"));
  EXPECT_THAT(text, HasSubstr("line 1"));
  std::filesystem::remove(path);
}

TEST(Logger, LinesFromTheFlushLevelUpAreInTheFileAtOnce)
{
  auto const path = temp_path("rmm_logger_flush.log");
  std::filesystem::remove(path);
  rmm::logger log{"unit", path.string()};
  EXPECT_EQ(log.flush_level(), rmm::level_enum::warn);
  log.warn("flushed by default");
  EXPECT_THAT(read_file(path), HasSubstr("flushed by default"));
  log.flush_on(rmm::level_enum::info);
  EXPECT_EQ(log.flush_level(), rmm::level_enum::info);
  log.info("flushed at info");
  EXPECT_THAT(read_file(path), HasSubstr("flushed at info")) << "seen before the logger flushes or closes";
  log.flush_on(rmm::level_enum::off);
  log.critical("held in the buffer");
  EXPECT_THAT(read_file(path), Not(HasSubstr("held in the buffer")));
  log.flush();
  EXPECT_THAT(read_file(path), HasSubstr("held in the buffer"));
  std::filesystem::remove(path);
}

TEST(Logger, UnopenableFileIsALogicErrorNamingThePath)
{
  try {
    rmm::logger log{"unit", "/nonexistent-dir/rmm.log"};
    FAIL() << "opened a file in a missing directory";
  } catch (rmm::logic_error const& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent-dir/rmm.log"));
    EXPECT_THAT(e.what(), HasSubstr("No such file or directory"));  // the system's reason
  }
}

TEST(Logger, ANullSinkIsRefusedWithAMessage)
{
  try {
    rmm::logger log{"unit", static_cast<std::FILE*>(nullptr)};
    FAIL() << "accepted a null sink";
  } catch (rmm::logic_error const& e) {
    EXPECT_THAT(e.what(), HasSubstr("the sink is null"));
  }
}

TEST(Logger, LevelNames)
{
  EXPECT_EQ(rmm::to_string(rmm::level_enum::warn), "warn");
  EXPECT_EQ(rmm::to_string(rmm::level_enum::off), "off");
  // The RMM documentation's spelling compiles.
  rmm::level_enum const level = rapids_logger::level_enum::trace;
  EXPECT_EQ(level, rmm::level_enum::trace);
}

TEST(DefaultLogger, MacrosWriteToStderrAtOrAboveTheLevel)
{
  auto& log        = rmm::default_logger();
  auto const saved = log.level();
  log.set_level(rmm::level_enum::warn);
  testing::internal::CaptureStderr();
  RMM_LOG_INFO("info {}", "suppressed");
  RMM_LOG_WARN("warn {}", "visible");
  RMM_LOG_ERROR("error {}", 42);
  auto const output = testing::internal::GetCapturedStderr();
  log.set_level(saved);
  EXPECT_THAT(output, Not(HasSubstr("suppressed")));
  EXPECT_THAT(output, HasSubstr("[rmm] [warn]"));
  EXPECT_THAT(output, HasSubstr("warn visible"));
  EXPECT_THAT(output, HasSubstr("error 42"));
}

/// Records what the logger hands it, to check levels, lines and flushes.
class recording_sink final : public rmm::logger_sink {
 public:
  void write(rmm::level_enum level, std::string_view line) override
  {
    std::lock_guard lock{mutex_};
    lines.emplace_back(level, std::string{line});
  }
  void flush() override
  {
    std::lock_guard lock{mutex_};
    ++flushes;
  }
  std::vector<std::pair<rmm::level_enum, std::string>> lines;
  int flushes{0};

 private:
  std::mutex mutex_;
};

/// Fails every call, to check that the logger shields its caller and its other sinks.
class throwing_sink final : public rmm::logger_sink {
 public:
  void write(rmm::level_enum, std::string_view) override { throw std::runtime_error{"write failed"}; }
  void flush() override { throw std::runtime_error{"flush failed"}; }
};

std::size_t count_of(std::string const& text, std::string const& what)
{
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) { ++count; }
  return count;
}

TEST(LoggerSinks, OstreamSinkOnTheDefaultLoggerGetsLinesUntilPoppedOff)
{
  auto& log          = rmm::default_logger();
  auto const saved   = log.level();
  auto const n_sinks = log.sinks().size();
  std::ostringstream oss;
  auto oss_sink = std::make_shared<rapids_logger::ostream_sink_mt>(oss);
  log.sinks().push_back(oss_sink);
  log.set_level(rapids_logger::level_enum::debug);
  testing::internal::CaptureStderr();
  log.debug("to the stream {}", 1);
  log.sinks().pop_back();
  log.debug("after the pop {}", 2);
  auto const err = testing::internal::GetCapturedStderr();
  log.set_level(saved);
  EXPECT_EQ(log.sinks().size(), n_sinks);
  EXPECT_THAT(oss.str(), HasSubstr("[rmm] [debug] [pid "));
  EXPECT_THAT(oss.str(), HasSubstr("to the stream 1\n"));
  EXPECT_THAT(oss.str(), Not(HasSubstr("after the pop")));
  EXPECT_EQ(count_of(oss.str(), "\n"), 1U) << oss.str();
  // The default sink kept getting every line.
  EXPECT_THAT(err, HasSubstr("to the stream 1"));
  EXPECT_THAT(err, HasSubstr("after the pop 2"));
}

TEST(LoggerSinks, TwoFileSinksBothGetTheLine)
{
  auto const path1 = temp_path("rmm_logger_sink1.log");
  auto const path2 = temp_path("rmm_logger_sink2.log");
  {
    auto file_sink1 = std::make_shared<rapids_logger::basic_file_sink_mt>(path1.string(), true);
    auto file_sink2 = std::make_shared<rapids_logger::basic_file_sink_mt>(path2.string(), true);
    EXPECT_EQ(file_sink1->filename(), path1.string());
    rmm::logger log{"two", {file_sink1, file_sink2}};
    EXPECT_EQ(log.sinks().size(), 2U);
    log.info("one line {}", 42);
    log.flush();
    EXPECT_THAT(read_file(path1), HasSubstr("[two] [info] [pid "));
    EXPECT_THAT(read_file(path1), HasSubstr("one line 42\n"));
    EXPECT_THAT(read_file(path2), HasSubstr("one line 42\n"));
  }
  EXPECT_EQ(read_file(path1), read_file(path2)) << "both sinks got the same line, and only it";
  std::filesystem::remove(path1);
  std::filesystem::remove(path2);
}

TEST(LoggerSinks, FileSinkTruncatesOnlyWhenAsked)
{
  auto const path = temp_path("rmm_logger_truncate.log");
  std::ofstream{path} << "earlier contents\n";
  {
    rmm::logger log{"unit", {std::make_shared<rmm::basic_file_sink_mt>(path.string())}};  // default: append
    log.warn("appended");
  }
  auto text = read_file(path);
  EXPECT_THAT(text, HasSubstr("earlier contents"));
  EXPECT_THAT(text, HasSubstr("appended"));
  {
    rmm::logger log{"unit", {std::make_shared<rmm::basic_file_sink_mt>(path.string(), false)}};
    log.warn("appended again");
  }
  text = read_file(path);
  EXPECT_THAT(text, HasSubstr("earlier contents"));
  EXPECT_EQ(count_of(text, "appended"), 2U);
  {
    rmm::logger log{"unit", {std::make_shared<rmm::basic_file_sink_mt>(path.string(), true)}};
    log.warn("after truncation");
  }
  text = read_file(path);
  EXPECT_THAT(text, Not(HasSubstr("earlier contents")));
  EXPECT_THAT(text, Not(HasSubstr("appended")));
  EXPECT_THAT(text, HasSubstr("after truncation"));
  EXPECT_EQ(count_of(text, "\n"), 1U);
  std::filesystem::remove(path);
}

TEST(LoggerSinks, UnopenableFileSinkIsALogicErrorNamingThePath)
{
  for (bool const truncate : {false, true}) {
    try {
      rapids_logger::basic_file_sink_mt sink{"/nonexistent-dir/sink.log", truncate};
      FAIL() << "opened a file in a missing directory";
    } catch (rmm::logic_error const& e) {
      EXPECT_THAT(e.what(), HasSubstr("'/nonexistent-dir/sink.log'"));
      EXPECT_THAT(e.what(), HasSubstr("No such file or directory"));  // the system's reason
      EXPECT_THAT(e.what(), HasSubstr(truncate ? "for writing" : "for appending"));
    }
  }
  // A NUL would cut the name short: refused instead of opening another file.
  auto const path = temp_path("rmm_logger_nul");
  EXPECT_THROW(rmm::basic_file_sink_mt(path.string() + std::string{"\0x", 2}), rmm::logic_error);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(LoggerSinks, LevelFilteringAppliesToEverySink)
{
  std::ostringstream first;
  std::ostringstream second;
  auto recorder = std::make_shared<recording_sink>();
  rmm::logger log{
    "unit", {std::make_shared<rmm::ostream_sink_mt>(first), std::make_shared<rmm::ostream_sink_mt>(second), recorder}};
  log.set_level(rmm::level_enum::warn);
  log.info("dropped");
  log.warn("kept {}", 1);
  log.error("kept {}", 2);
  log.set_level(rmm::level_enum::off);
  log.critical("dropped too");
  for (auto const* out : {&first, &second}) {
    EXPECT_THAT(out->str(), Not(HasSubstr("dropped")));
    EXPECT_THAT(out->str(), HasSubstr("[unit] [warn] [pid "));
    EXPECT_THAT(out->str(), HasSubstr("kept 1"));
    EXPECT_THAT(out->str(), HasSubstr("kept 2"));
    EXPECT_EQ(count_of(out->str(), "\n"), 2U);
  }
  EXPECT_EQ(first.str(), second.str());
  ASSERT_EQ(recorder->lines.size(), 2U);
  EXPECT_EQ(recorder->lines[0].first, rmm::level_enum::warn);
  EXPECT_EQ(recorder->lines[1].first, rmm::level_enum::error);
  EXPECT_EQ(recorder->lines[0].second.back(), '\n') << "a sink gets whole lines";
}

TEST(LoggerSinks, SinksAreFlushedAtTheFlushLevelAndOnFlush)
{
  auto recorder = std::make_shared<recording_sink>();
  rmm::logger log{"unit", {recorder}};
  log.info("below the flush level");
  EXPECT_EQ(recorder->flushes, 0);
  log.warn("at the flush level");
  EXPECT_EQ(recorder->flushes, 1);
  log.flush_on(rmm::level_enum::off);
  log.critical("never flushed at once");
  EXPECT_EQ(recorder->flushes, 1);
  log.flush();
  EXPECT_EQ(recorder->flushes, 2);

  // A stream sink without force_flush is flushed at the flush level all the same.
  auto const path = temp_path("rmm_logger_ostream_flush.log");
  std::ofstream file{path};
  rmm::logger file_log{"unit", {std::make_shared<rmm::ostream_sink_mt>(file)}};
  file_log.warn("flushed by the logger");
  EXPECT_THAT(read_file(path), HasSubstr("flushed by the logger"));
  std::filesystem::remove(path);
}

TEST(LoggerSinks, ForceFlushMakesEveryLineReadableAtOnce)
{
  auto const path = temp_path("rmm_logger_force_flush.log");
  std::ofstream file{path};
  rmm::logger log{"unit", {std::make_shared<rmm::ostream_sink_mt>(file, true)}};
  log.flush_on(rmm::level_enum::off);
  log.info("readable without a flush");
  EXPECT_THAT(read_file(path), HasSubstr("readable without a flush"));
  std::filesystem::remove(path);
}

TEST(LoggerSinks, AFailingSinkCostsTheOthersNothingAndWriteNeverThrows)
{
  std::ostringstream oss;
  rmm::logger log{"unit", {std::make_shared<throwing_sink>(), std::make_shared<rmm::ostream_sink_mt>(oss)}};
  EXPECT_NO_THROW(log.error("still delivered"));
  EXPECT_NO_THROW(log.flush());
  log.sinks().push_back(nullptr);  // skipped, not dereferenced
  EXPECT_NO_THROW(log.error("past a null sink"));
  EXPECT_THAT(oss.str(), HasSubstr("still delivered"));
  EXPECT_THAT(oss.str(), HasSubstr("past a null sink"));
}

TEST(LoggerSinks, NullSinkInTheListIsRefused)
{
  try {
    rmm::logger log{"unit", std::vector<rmm::logger_sink_ptr>{std::make_shared<recording_sink>(), nullptr}};
    FAIL() << "accepted a null sink";
  } catch (rmm::logic_error const& e) {
    EXPECT_THAT(e.what(), HasSubstr("sink 1 of 2 is null"));
  }
  rmm::logger empty{"unit", std::vector<rmm::logger_sink_ptr>{}};  // allowed: it drops every line
  EXPECT_NO_THROW(empty.error("nowhere"));
  EXPECT_TRUE(empty.sinks().empty());
}

TEST(LoggerSinks, ConcurrentWritersLeaveWholeLinesInEverySink)
{
  constexpr int n_threads = 8;
  constexpr int n_lines   = 500;
  std::ostringstream oss;
  auto recorder = std::make_shared<recording_sink>();
  rmm::logger log{"unit", {std::make_shared<rmm::ostream_sink_mt>(oss), recorder}};
  std::vector<std::thread> threads;
  for (int t = 0; t < n_threads; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < n_lines; ++i) { log.info("thread {} line {} end", t, i); }
    });
  }
  for (auto& thread : threads) { thread.join(); }
  std::istringstream lines{oss.str()};
  std::string line;
  std::size_t count = 0;
  while (std::getline(lines, line)) {
    ASSERT_THAT(line,
                ::testing::MatchesRegex(R"(\[.*\] \[unit\] \[info\] \[pid [0-9]+\] thread [0-9]+ line [0-9]+ end)"));
    EXPECT_EQ(line + "\n", recorder->lines[count].second) << "every sink sees the same order";
    ++count;
  }
  EXPECT_EQ(count, static_cast<std::size_t>(n_threads * n_lines));
  EXPECT_EQ(recorder->lines.size(), count);
}

TEST(LoggerSinks, RapidsLoggerSpellingsNameOurTypes)
{
  static_assert(std::is_same_v<rapids_logger::sink, rmm::logger_sink>);
  static_assert(std::is_same_v<rapids_logger::sink_ptr, std::shared_ptr<rmm::logger_sink>>);
  static_assert(std::is_same_v<rapids_logger::ostream_sink_mt, rmm::ostream_sink_mt>);
  static_assert(std::is_same_v<rapids_logger::basic_file_sink_mt, rmm::basic_file_sink_mt>);
  static_assert(std::is_same_v<rapids_logger::stderr_sink_mt, rmm::stderr_sink_mt>);
  std::ostringstream oss;
  rapids_logger::sink_ptr const sink = std::make_shared<rapids_logger::ostream_sink_mt>(oss, true);
  rmm::logger log{"spelled", {sink, std::make_shared<rapids_logger::stderr_sink_mt>()}};
  testing::internal::CaptureStderr();
  log.warn("both {}", "ways");
  auto const err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(oss.str(), HasSubstr("[spelled] [warn] [pid "));
  EXPECT_THAT(oss.str(), HasSubstr("both ways"));
  EXPECT_THAT(err, HasSubstr("both ways"));
}

// The default logger reads its environment once, so these run in a fresh child process (which
// runs the test body again: the path must not depend on the process).
TEST(DefaultLoggerDeathTest, LogFileAndLevelFromEnvironment)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto const path = std::filesystem::temp_directory_path() / "rmm_default_logger_test.log";
  std::filesystem::remove(path);
  EXPECT_EXIT(
    {
      ::setenv("RMM_DEBUG_LOG_FILE", path.c_str(), 1);
      ::setenv("RMM_DEBUG_LOG_LEVEL", "debug", 1);
      RMM_LOG_TRACE("below debug");
      rmm::default_logger().debug("at debug {}", 7);  // the runtime level, independent of compile level
      rmm::default_logger().flush();
      std::exit(0);
    },
    ::testing::ExitedWithCode(0), "");
  auto const text = read_file(path);
  EXPECT_THAT(text, HasSubstr("at debug 7"));
  EXPECT_THAT(text, Not(HasSubstr("below debug")));
  std::filesystem::remove(path);
}

TEST(DefaultLoggerDeathTest, UnknownLevelIsReportedNotIgnored)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
    {
      ::setenv("RMM_DEBUG_LOG_LEVEL", "loud", 1);
      (void)rmm::default_logger();
      std::exit(0);
    },
    ::testing::ExitedWithCode(0), "RMM_DEBUG_LOG_LEVEL='loud' is not a log level");
}

TEST(DefaultLoggerDeathTest, UnopenableLogFileFallsBackToStderrLoudly)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
    {
      ::setenv("RMM_DEBUG_LOG_FILE", "/nonexistent-dir/x.log", 1);
      rmm::default_logger().error("still reported");
      std::exit(0);
    },
    ::testing::ExitedWithCode(0), "cannot open debug log file '/nonexistent-dir/x.log'.*still reported");
}

}  // namespace
