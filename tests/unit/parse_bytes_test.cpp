// SPDX-License-Identifier: Apache-2.0
// rmm::parse_bytes, the one reader of byte sizes (configuration, environment, rmm-replay).

#include <rmm/parse_bytes.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

std::uint64_t bytes_of(std::string_view text)
{
  auto const parsed = rmm::parse_bytes(text);
  if (auto const* problem = std::get_if<rmm::bytes_problem>(&parsed)) {
    ADD_FAILURE() << "'" << text << "' refused: expected " << problem->expected;
    return 0;
  }
  return std::get<std::uint64_t>(parsed);
}

std::string problem_of(std::string_view text)
{
  auto const parsed = rmm::parse_bytes(text);
  if (auto const* problem = std::get_if<rmm::bytes_problem>(&parsed)) { return problem->expected; }
  ADD_FAILURE() << "'" << text << "' accepted as " << std::get<std::uint64_t>(parsed) << " bytes";
  return {};
}

TEST(ParseBytes, BinaryUnitsInAnyCaseWithOrWithoutASpace)
{
  EXPECT_EQ(bytes_of("4096"), 4096U);
  EXPECT_EQ(bytes_of("100B"), 100U);
  EXPECT_EQ(bytes_of("64 KiB"), 64U << 10);
  EXPECT_EQ(bytes_of("512mib"), 512U << 20);
  EXPECT_EQ(bytes_of(" 1.5GiB "), 3ULL << 29);
  EXPECT_EQ(bytes_of("2TiB"), 2ULL << 40);
  EXPECT_EQ(bytes_of("0"), 0U);
}

TEST(ParseBytes, DecimalUnitsAreRefusedWithTheBinaryUnitOfTheSameLetter)
{
  EXPECT_NE(problem_of("512MB").find("write \"512MiB\" for 512 * 2^20 bytes"), std::string::npos);
  EXPECT_NE(problem_of("8 G").find("\"8GiB\""), std::string::npos);
  EXPECT_NE(problem_of("1kb").find("\"1KiB\""), std::string::npos);
}

TEST(ParseBytes, RefusesWhatNamesNoWholeNumberOfBytes)
{
  EXPECT_EQ(problem_of("-1"), "a size above 0 (sizes cannot be negative)");
  EXPECT_EQ(problem_of(""), rmm::byte_size_expectation());
  EXPECT_EQ(problem_of("lots"), rmm::byte_size_expectation());
  EXPECT_EQ(problem_of("12 parsecs"), rmm::byte_size_expectation());
  EXPECT_EQ(problem_of("1."), rmm::byte_size_expectation());
  EXPECT_NE(problem_of("1.5B").find("not whole"), std::string::npos);
  EXPECT_EQ(problem_of("1.1234567GiB"), "a size with at most 6 decimals, like \"1.5GiB\"");
  EXPECT_EQ(problem_of("18446744073709551616"), "a size below 16 EiB (2^64 bytes)");
  EXPECT_EQ(problem_of("16777216TiB"), "a size below 16 EiB (2^64 bytes)");
  EXPECT_EQ(bytes_of("18446744073709551615"), UINT64_MAX);
}

}  // namespace
