// SPDX-License-Identifier: Apache-2.0
#include <rmm/aligned.hpp>

#include <gtest/gtest.h>

namespace {

static_assert(rmm::CUDA_ALLOCATION_ALIGNMENT == 256);
static_assert(rmm::align_up(0, 256) == 0);
static_assert(rmm::align_up(1, 256) == 256);
static_assert(rmm::align_up(256, 256) == 256);
static_assert(rmm::align_down(511, 256) == 256);
static_assert(rmm::is_aligned(512, 256));
static_assert(!rmm::is_aligned(513, 256));

TEST(Aligned, PowersOfTwo)
{
  EXPECT_FALSE(rmm::is_pow2(0));
  for (std::size_t v = 1; v != 0; v <<= 1) {
    EXPECT_TRUE(rmm::is_pow2(v)) << v;
    EXPECT_TRUE(rmm::is_supported_alignment(v)) << v;
    if (v > 2) { EXPECT_FALSE(rmm::is_pow2(v - 1)) << v - 1; }
  }
}

TEST(Aligned, RoundingIsIdempotentAndBracketsTheValue)
{
  for (std::size_t alignment : {1UL, 8UL, 256UL, 4096UL}) {
    for (std::size_t v : {0UL, 1UL, 255UL, 256UL, 257UL, 1000000UL}) {
      auto const up   = rmm::align_up(v, alignment);
      auto const down = rmm::align_down(v, alignment);
      EXPECT_LE(down, v);
      EXPECT_GE(up, v);
      EXPECT_LT(up - down, alignment == 1 ? 1 : alignment + 1);
      EXPECT_EQ(rmm::align_up(up, alignment), up);
      EXPECT_TRUE(rmm::is_aligned(up, alignment));
      EXPECT_TRUE(rmm::is_aligned(down, alignment));
    }
  }
}

TEST(Aligned, Pointers)
{
  alignas(512) static char buffer[1024];
  EXPECT_TRUE(rmm::is_pointer_aligned(buffer));
  EXPECT_FALSE(rmm::is_pointer_aligned(buffer + 1));
  EXPECT_TRUE(rmm::is_pointer_aligned(buffer + 8, 8));
}

}  // namespace
