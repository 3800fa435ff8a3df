#include <rmm/error.hpp>
#include <rmm/logger.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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
