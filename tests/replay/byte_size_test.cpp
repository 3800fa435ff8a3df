// Sizes on rmm-replay's command line.

#include "byte_size.hpp"

#include <gtest/gtest.h>

namespace {

using rmm::replay::parse_byte_size;

TEST(ByteSize, BytesAndUnits)
{
  EXPECT_EQ(parse_byte_size("0"), 0U);
  EXPECT_EQ(parse_byte_size("1048576"), 1048576U);
  EXPECT_EQ(parse_byte_size("18446744073709551615"), 18446744073709551615ULL);
  EXPECT_EQ(parse_byte_size("512B"), 512U);
  EXPECT_EQ(parse_byte_size("4KiB"), 4096U);
  EXPECT_EQ(parse_byte_size("512MiB"), 512U << 20);
  EXPECT_EQ(parse_byte_size("80GiB"), std::size_t{80} << 30);
  EXPECT_EQ(parse_byte_size("80gib"), std::size_t{80} << 30);
  EXPECT_EQ(parse_byte_size("1.5 GiB"), std::size_t{3} << 29);
  EXPECT_EQ(parse_byte_size("2TiB"), std::size_t{2} << 40);
  EXPECT_EQ(parse_byte_size("80GB"), 80'000'000'000U);
  EXPECT_EQ(parse_byte_size("1.5kb"), 1500U);
}

TEST(ByteSize, RefusesWhatIsNotASize)
{
  for (auto const* text : {"", "GiB", "-1", "1.2.3GiB", "12 parsecs", "1e9", "0x100", "80 GiB ", "99999999999TiB",
                           "18446744073709551616"}) {
    EXPECT_FALSE(parse_byte_size(text).has_value()) << text;
  }
}

}  // namespace
