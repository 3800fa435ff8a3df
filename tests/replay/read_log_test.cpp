// SPDX-License-Identifier: Apache-2.0
// rmm::trace::read_log on files as they arrive: plain or compressed, and damaged.

#include <allocation_log.hpp>

#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string const header = "Thread,Time,Action,Pointer,Size,Stream\n";

/// A compressed log of `rows` allocations, written with zlib.
std::string write_compressed_log(std::string const& path, int rows)
{
  std::string text = header;
  for (int i = 0; i < rows; ++i) {
    text += std::to_string(100 + i % 7) + ",10:00:00." + std::to_string(100000 + i) + ",allocate,0x" +
            std::to_string(7000 + i) + "00," + std::to_string(256 * (i % 97 + 1)) + ",0x0\n";
  }
  gzFile file = gzopen(path.c_str(), "wb");
  EXPECT_NE(file, nullptr);
  EXPECT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  EXPECT_EQ(gzclose(file), Z_OK);
  return text;
}

std::string read_error(std::string const& path)
{
  try {
    (void)rmm::trace::read_log(path);
  } catch (rmm::trace::parse_error const& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ReadLog, ACompressedLogReadsLikeItsText)
{
  std::string const path = ::testing::TempDir() + "read_log_whole.csv.gz";
  auto const text        = write_compressed_log(path, 500);
  EXPECT_EQ(rmm::trace::read_log(path).size(), rmm::trace::parse_log(text, path).size());
  EXPECT_EQ(rmm::trace::read_log(path).size(), 500U);
  std::remove(path.c_str());
}

TEST(ReadLog, ADamagedCompressedLogIsRefusedWithZlibsReason)
{
  std::string const path = ::testing::TempDir() + "read_log_damaged.csv.gz";
  (void)write_compressed_log(path, 20000);
  std::string bytes;
  {
    std::ifstream in{path, std::ios::binary};
    bytes.assign(std::istreambuf_iterator<char>{in}, {});
  }
  ASSERT_GT(bytes.size(), 1000U);
  for (std::size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i) { bytes[i] = static_cast<char>(~bytes[i]); }
  {
    std::ofstream out{path, std::ios::binary | std::ios::trunc};
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  auto const error    = read_error(path);
  auto const expected = path + ": cannot read the log: ";
  ASSERT_EQ(error.rfind(expected, 0), 0U) << error;
  auto const reason = error.substr(expected.size());
  EXPECT_FALSE(reason.empty());
  EXPECT_TRUE(std::all_of(reason.begin(), reason.end(), [](char c) { return c >= 0x20 && c < 0x7f; }))
    << "zlib's message must be copied before the file is closed: " << reason;
  std::remove(path.c_str());
}

TEST(ReadLog, ALastRowWithoutItsLineEndIsDroppedOnlyWhenAsked)
{
  std::string const text = header + "1,00:00:01.000000,allocate,0x100,256,0x0\n1,00:00:01.000001,free,0x1";
  try {
    (void)rmm::trace::parse_log(text, "cut.csv");
    ADD_FAILURE() << "a cut-off row was accepted";
  } catch (rmm::trace::parse_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("cut.csv:3: 4 column(s)"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("--complete-rows"), std::string::npos) << e.what();
  }
  auto const kept = rmm::trace::parse_log(text, "cut.csv", rmm::trace::cut_off_row::drop);
  EXPECT_EQ(kept.events.size(), 1U);
  EXPECT_EQ(kept.dropped_line, 3U);
  auto const whole = rmm::trace::parse_log(text + "00,4,0x0\n", "whole.csv", rmm::trace::cut_off_row::drop);
  EXPECT_EQ(whole.events.size(), 2U);
  EXPECT_EQ(whole.dropped_line, 0U);
}

TEST(ReadLog, ACompressedLogCutOffKeepsItsCompleteRowsWhenAsked)
{
  std::string const path = ::testing::TempDir() + "read_log_cut.csv.gz";
  (void)write_compressed_log(path, 20000);
  std::string bytes;
  {
    std::ifstream in{path, std::ios::binary};
    bytes.assign(std::istreambuf_iterator<char>{in}, {});
  }
  {
    std::ofstream out{path, std::ios::binary | std::ios::trunc};
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  EXPECT_NE(read_error(path).find("--complete-rows"), std::string::npos) << read_error(path);
  auto const kept = rmm::trace::read_log(path, rmm::trace::cut_off_row::drop);
  EXPECT_GT(kept.events.size(), 1000U);
  EXPECT_LT(kept.events.size(), 20000U);
  EXPECT_EQ(kept.dropped_line, kept.events.size() + 2) << "the header, the kept rows, then the lost one";
  std::remove(path.c_str());
}

TEST(ReadLog, ReadsWhatTheLoggingAdaptorWritesByTheOneFormatDefinition)
{
  namespace format = rmm::mr::allocation_log;
  EXPECT_EQ(std::count(format::header.begin(), format::header.end(), ',') + 1, static_cast<long>(format::columns));
  std::string text = std::string{format::header} + "\n";
  for (auto const a : {format::action::allocate, format::action::allocate_failure, format::action::free}) {
    EXPECT_EQ(format::parse_action(format::action_name(a)), a);
    text += "7,01:02:03.000004," + std::string{format::action_name(a)} + ",0x100,256,0x0\n";
  }
  EXPECT_FALSE(format::parse_action("Free").has_value());
  auto const events = rmm::trace::parse_log(text, "log.csv");
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[1].kind, format::action::allocate_failure);
  EXPECT_EQ(events[2].kind, format::action::free);
}

TEST(ReadLog, ALineLongerThanTheLimitIsRefusedNamingItsLine)
{
  auto const row          = std::string{"1,00:00:01.000000,allocate,0x100,256,0x0\n"};
  auto const at_the_limit = header + row + std::string(rmm::trace::max_line_bytes, '7') + "\n";
  try {
    (void)rmm::trace::parse_log(at_the_limit, "limit.csv");
    ADD_FAILURE() << "a line of digits was accepted as a row";
  } catch (rmm::trace::parse_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("limit.csv:3: 1 column(s)"), std::string::npos) << "only a row's error";
  }
  auto const beyond = header + row + std::string(rmm::trace::max_line_bytes + 1, '7') + "\n" + row;
  try {
    (void)rmm::trace::parse_log(beyond, "long.csv", rmm::trace::cut_off_row::drop);
    ADD_FAILURE() << "a line beyond the limit was accepted";
  } catch (rmm::trace::parse_error const& e) {
    EXPECT_EQ(std::string{e.what()},
              "long.csv:3: line longer than 65536 bytes: not an allocation log (a row is at most about 120 bytes)");
  }
}

TEST(ReadLog, AnEndlessLineIsRefusedWithoutReadingItWhole)
{
  // A pipe that would give 64 MiB without a line end, as /dev/zero gives endless zeros: reading
  // stops at the limit, and the writer finds the pipe closed long before it is done.
  std::string const path = ::testing::TempDir() + "read_log_endless_" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  auto const previous           = std::signal(SIGPIPE, SIG_IGN);  // the writer sees EPIPE instead
  constexpr std::size_t offered = std::size_t{64} << 20;
  std::size_t written           = 0;
  std::thread writer{[&] {
    int const fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) { return; }
    std::vector<char> const chunk(1 << 16, 'x');
    while (written < offered) {
      auto const n = ::write(fd, chunk.data(), chunk.size());
      if (n <= 0) { break; }
      written += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }};
  auto const error = read_error(path);
  writer.join();
  std::signal(SIGPIPE, previous);
  std::remove(path.c_str());
  EXPECT_EQ(error, path + ":1: line longer than 65536 bytes: not an allocation log (a row is at most about 120 bytes)");
  EXPECT_LT(written, offered / 16) << "the log was read on past the limit";
}

std::string parse_error_of(std::string const& text)
{
  try {
    (void)rmm::trace::parse_log(text, "log.csv");
  } catch (rmm::trace::parse_error const& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ReadLog, ErrorsShowALongFieldCutToItsStartAndLength)
{
  auto const long_field = std::string(40000, '9') + "z";
  auto const shown      = std::string(64, '9') + "... (40001 bytes)";
  auto const row        = [](std::string const& thread, std::string const& time, std::string const& action,
                      std::string const& pointer) {
    return thread + "," + time + "," + action + "," + pointer + ",256,0x0\n";
  };
  EXPECT_EQ(parse_error_of(header + row(long_field, "00:00:01.000000", "allocate", "0x100")),
            "log.csv:2: column Thread is '" + shown + "', expected a decimal number");
  EXPECT_EQ(parse_error_of(header + row("1", long_field, "allocate", "0x100")),
            "log.csv:2: column Time is '" + shown + "', expected HH:MM:SS.ffffff");
  EXPECT_EQ(parse_error_of(header + row("1", "00:00:01.000000", long_field, "0x100")),
            "log.csv:2: unknown action '" + shown + "', expected allocate, allocate failure or free");
  EXPECT_EQ(parse_error_of(header + row("1", "00:00:01.000000", "allocate", long_field)),
            "log.csv:2: column Pointer is '" + shown + "', expected a hexadecimal number");
  EXPECT_EQ(parse_error_of(long_field + "\n"),
            "log.csv:1: expected the header 'Thread,Time,Action,Pointer,Size,Stream', found '" + shown + "'");
  // A field of 64 bytes is shown whole; control characters (a binary file) are shown escaped.
  EXPECT_EQ(parse_error_of(header + row("1", "00:00:01.000000", std::string(64, 'a'), "0x100")),
            "log.csv:2: unknown action '" + std::string(64, 'a') + "', expected allocate, allocate failure or free");
  std::string const binary{'\x7f', 'E', 'L', 'F', '\x02', '\x01', '\x01', '\0', '\n'};
  EXPECT_EQ(parse_error_of(binary),
            "log.csv:1: expected the header 'Thread,Time,Action,Pointer,Size,Stream', found "
            "'\\x7fELF\\x02\\x01\\x01\\x00'");
}

TEST(ReadLog, ATimeNoDayHasIsRefusedNamingItsLine)
{
  auto const at = [](std::string const& time) { return header + "1," + time + ",allocate,0x100,256,0x0\n"; };
  for (auto const* time : {"99:99:99.999999", "24:00:00.000000", "23:60:00.000000", "23:59:61.000000"}) {
    EXPECT_EQ(parse_error_of(at(time)), "log.csv:2: column Time is '" + std::string{time} +
                                          "', a time no day has (hours up to 23, minutes up to 59, seconds up to "
                                          "59, or 60 in a leap second)");
  }
  // Only digits where HH:MM:SS.ffffff has them.
  for (auto const* time : {"1:00:00.000000", "00:00:1e1", "00:00:00.", "00:00:00.12a", "-1:00:00.000000"}) {
    EXPECT_EQ(parse_error_of(at(time)),
              "log.csv:2: column Time is '" + std::string{time} + "', expected HH:MM:SS.ffffff");
  }
  EXPECT_DOUBLE_EQ(rmm::trace::parse_log(at("23:59:59.999999"), "log.csv").at(0).time_seconds, 86399.999999);
  EXPECT_DOUBLE_EQ(rmm::trace::parse_log(at("23:59:60.5"), "log.csv").at(0).time_seconds, 86400.5);  // leap second
  EXPECT_DOUBLE_EQ(rmm::trace::parse_log(at("01:02:03"), "log.csv").at(0).time_seconds, 3723.0);
}

}  // namespace
