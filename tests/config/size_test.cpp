// SPDX-License-Identifier: Apache-2.0
// Sizes ("512MiB", "50%") and log file name patterns.

#include <rmm/config/file_name_pattern.hpp>
#include <rmm/config/size.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using rmm::config::parse_size;
using rmm::config::size_problem;
using rmm::config::size_spec;

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = KiB * 1024;
constexpr std::uint64_t GiB = MiB * 1024;

std::uint64_t bytes_of(std::string const& text)
{
  auto const parsed = parse_size(text, true);
  EXPECT_TRUE(std::holds_alternative<size_spec>(parsed)) << text;
  if (!std::holds_alternative<size_spec>(parsed)) { return 0; }
  auto const size = std::get<size_spec>(parsed);
  EXPECT_FALSE(size.is_percent) << text;
  return size.bytes;
}

std::string problem_of(std::string const& text, bool allow_percent = true)
{
  auto const parsed = parse_size(text, allow_percent);
  EXPECT_TRUE(std::holds_alternative<size_problem>(parsed)) << text << " was accepted";
  return std::holds_alternative<size_problem>(parsed) ? std::get<size_problem>(parsed).expected : std::string{};
}

TEST(ConfigSize, BytesAndBinaryUnits)
{
  EXPECT_EQ(bytes_of("4096"), 4096U);
  EXPECT_EQ(bytes_of("17B"), 17U);
  EXPECT_EQ(bytes_of("64KiB"), 64 * KiB);
  EXPECT_EQ(bytes_of("512MiB"), 512 * MiB);
  EXPECT_EQ(bytes_of("8GiB"), 8 * GiB);
  EXPECT_EQ(bytes_of("2TiB"), 2 * GiB * 1024);
  EXPECT_EQ(bytes_of("512mib"), 512 * MiB);  // case-insensitive, like RMM_EMU_DEVICE_MEMORY
  EXPECT_EQ(bytes_of(" 8 GiB "), 8 * GiB);
  EXPECT_EQ(bytes_of("1.5GiB"), 3 * GiB / 2);
  EXPECT_EQ(bytes_of("0.25KiB"), 256U);
}

TEST(ConfigSize, Percentages)
{
  auto const half = std::get<size_spec>(parse_size("50%", true));
  EXPECT_TRUE(half.is_percent);
  EXPECT_DOUBLE_EQ(half.percent, 50.0);
  EXPECT_DOUBLE_EQ(std::get<size_spec>(parse_size("12.5 %", true)).percent, 12.5);
  EXPECT_DOUBLE_EQ(std::get<size_spec>(parse_size("100%", true)).percent, 100.0);
  // Rounded down to a multiple of 256, as percent_of_free_device_memory does.
  EXPECT_EQ(rmm::config::resolve_size(half, 1000 * MiB), 500 * MiB);
  EXPECT_EQ(rmm::config::resolve_size(std::get<size_spec>(parse_size("10%", true)), 1000), 0U);
  EXPECT_EQ(rmm::config::resolve_size(std::get<size_spec>(parse_size("50%", true)), 10'000), 4864U);
}

TEST(ConfigSize, RefusesWhatIsNotASize)
{
  EXPECT_NE(problem_of("150%").find("at most 100%"), std::string::npos);
  EXPECT_NE(problem_of("0%").find("above 0%"), std::string::npos);
  EXPECT_NE(problem_of("-5MiB").find("cannot be negative"), std::string::npos);
  EXPECT_NE(problem_of("8GB").find("ambiguous"), std::string::npos);
  EXPECT_NE(problem_of("8 G").find("ambiguous"), std::string::npos);
  // The hint is the binary unit of the same letter, for the number written.
  EXPECT_NE(problem_of("512MB").find("write \"512MiB\" for 512 * 2^20 bytes"), std::string::npos)
    << problem_of("512MB");
  EXPECT_NE(problem_of("8 G").find("write \"8GiB\" for 8 * 2^30 bytes"), std::string::npos) << problem_of("8 G");
  EXPECT_NE(problem_of("1.5kb").find("write \"1.5KiB\""), std::string::npos) << problem_of("1.5kb");
  EXPECT_NE(problem_of("2TB").find("write \"2TiB\""), std::string::npos) << problem_of("2TB");
  EXPECT_NE(problem_of("1.3B").find("whole number of bytes"), std::string::npos);
  EXPECT_NE(problem_of("50%", false).find("not accepted here"), std::string::npos);
  EXPECT_NE(problem_of("99999999999TiB").find("below 16 EiB"), std::string::npos);
  for (auto const* garbage : {"", "MiB", "five", "1e9", "0x100", "1.", ".5GiB", "5 MiBs", "50%%", "inf%", "nan%"}) {
    EXPECT_NE(problem_of(garbage), "") << garbage;
  }
}

TEST(ConfigSize, Formatting)
{
  EXPECT_EQ(rmm::config::to_toml_text(size_spec{.bytes = 8 * GiB}), "\"8GiB\"");
  EXPECT_EQ(rmm::config::to_toml_text(size_spec{.bytes = 1000}), "1000");
  EXPECT_EQ(rmm::config::to_toml_text(size_spec{.percent = 12.5, .is_percent = true}), "\"12.5%\"");
}

TEST(ConfigFileNamePattern, ExpandsPlaceholders)
{
  EXPECT_EQ(rmm::config::expand_file_name_pattern("log-%p-dev%d.csv", 4711, 1), "log-4711-dev1.csv");
  EXPECT_EQ(rmm::config::expand_file_name_pattern("100%%.csv", 1, 0), "100%.csv");
  EXPECT_FALSE(rmm::config::file_name_pattern_problem("plain.csv"));
  EXPECT_EQ(rmm::config::file_name_pattern_problem("a%x.csv"), "the unknown placeholder '%x'");
  EXPECT_EQ(rmm::config::file_name_pattern_problem("a%"), "a lone '%' at the end");
  EXPECT_EQ(rmm::config::file_name_pattern_problem(""), "an empty file name");
}

}  // namespace
