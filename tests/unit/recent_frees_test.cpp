// SPDX-License-Identifier: Apache-2.0
// The latest frees a free list keeps unmerged (coalescing_free_list::insert_recent): an exact
// size comes back from them, a double free among them is refused, and every other operation sees
// the blocks merged as if they had been inserted at once.

#include "mr/detail/coalescing_free_list.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rmm::test {
namespace {

using rmm::mr::detail::chunk_starts;
using rmm::mr::detail::coalescing_free_list;
using rmm::mr::detail::memory_range;

constexpr std::uintptr_t base = 0x10000000;
constexpr std::size_t kib     = 1024;

std::vector<memory_range> ranges_of(coalescing_free_list const& list)
{
  std::vector<memory_range> ranges;
  list.for_each([&ranges](memory_range r) { ranges.push_back(r); });
  return ranges;
}

TEST(RecentFrees, AnExactSizeComesBackLatestFirstWithoutTouchingTheMergedBlocks)
{
  chunk_starts const chunks{base};
  coalescing_free_list list;
  ASSERT_TRUE(list.insert({base + 64 * kib, 960 * kib}, chunks));
  ASSERT_TRUE(list.insert_recent({base, 4 * kib}, chunks, 1));
  ASSERT_TRUE(list.insert_recent({base + 4 * kib, 4 * kib}, chunks, 2));
  EXPECT_EQ(list.free_bytes(), 968 * kib);
  EXPECT_EQ(list.block_count(), 3U);

  auto const latest = list.take_recent(4 * kib);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->start, base + 4 * kib);
  EXPECT_FALSE(list.take_recent(8 * kib).has_value());  // recent frees are never merged for it
  EXPECT_EQ(list.free_bytes(), 964 * kib);
}

TEST(RecentFrees, ADoubleFreeIsRefusedWhetherTheFirstFreeWasRecentOrMerged)
{
  chunk_starts const chunks{base};
  coalescing_free_list list;
  ASSERT_TRUE(list.insert_recent({base, 4 * kib}, chunks, 1));
  EXPECT_FALSE(list.insert_recent({base, 4 * kib}, chunks, 2));
  EXPECT_FALSE(list.insert({base, 4 * kib}, chunks, 2));
  EXPECT_FALSE(list.insert_recent({base, 8 * kib}, chunks, 2));  // same start, wrong size
  ASSERT_TRUE(list.insert({base + 8 * kib, 4 * kib}, chunks, 1));
  EXPECT_FALSE(list.insert_recent({base + 8 * kib, 4 * kib}, chunks, 2));
  EXPECT_EQ(list.free_bytes(), 8 * kib);
}

TEST(RecentFrees, ACutMergesThemFirstSoNoBlockIsSplitThatCouldHaveBeenWhole)
{
  chunk_starts const chunks{base};
  coalescing_free_list list;
  // Three neighbours freed one by one: merged, they are one 12 KiB block.
  for (std::uintptr_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(list.insert_recent({base + i * 4 * kib, 4 * kib}, chunks, i + 1));
  }
  auto const taken = list.take(12 * kib, chunks);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->start, base);
  EXPECT_EQ(list.free_bytes(), 0U);
  EXPECT_EQ(list.block_count(), 0U);
}

TEST(RecentFrees, TheOldestIsMergedWhenTheListIsFull)
{
  chunk_starts const chunks{base};
  coalescing_free_list list;
  auto const n = coalescing_free_list::recent_capacity + 1;
  // Neighbours freed one by one: when the last comes, the oldest is merged (with nothing yet, its
  // right neighbour being still recent), and the others wait.
  for (std::uintptr_t i = 0; i < n; ++i) {
    ASSERT_TRUE(list.insert_recent({base + i * 4 * kib, 4 * kib}, chunks, i + 1));
  }
  EXPECT_EQ(list.block_count(), n);
  EXPECT_EQ(list.free_bytes(), n * 4 * kib);
  list.spill(chunks);
  auto const ranges = ranges_of(list);
  ASSERT_EQ(ranges.size(), 1U);
  EXPECT_EQ(ranges[0].start, base);
  EXPECT_EQ(ranges[0].size, n * 4 * kib);
}

TEST(RecentFrees, MergingNeverCrossesAChunkBoundary)
{
  chunk_starts const chunks{base, base + 4 * kib};
  coalescing_free_list list;
  ASSERT_TRUE(list.insert_recent({base, 4 * kib}, chunks, 1));
  ASSERT_TRUE(list.insert_recent({base + 4 * kib, 4 * kib}, chunks, 2));
  list.spill(chunks);
  EXPECT_EQ(list.block_count(), 2U);
  EXPECT_EQ(list.largest_block(), 4 * kib);
}

TEST(RecentFrees, DrainingHandsThemOverWithTheRest)
{
  chunk_starts const chunks{base};
  coalescing_free_list list;
  ASSERT_TRUE(list.insert({base + 64 * kib, 64 * kib}, chunks, 1));
  ASSERT_TRUE(list.insert_recent({base, 4 * kib}, chunks, 5));
  ASSERT_TRUE(list.insert_recent({base + 8 * kib, 4 * kib}, chunks, 2));
  std::vector<memory_range> drained;
  list.drain_freed_before(2, [&drained](memory_range r) { drained.push_back(r); });
  EXPECT_EQ(drained.size(), 2U);  // freed at 1 and 2; the one freed at 5 stays
  EXPECT_EQ(list.free_bytes(), 4 * kib);
  list.drain([&drained](memory_range r) { drained.push_back(r); });
  EXPECT_EQ(drained.size(), 3U);
  EXPECT_EQ(list.free_bytes(), 0U);
}

TEST(RecentFrees, WhereSizesDoNotRepeatFreesMergeAtOnce)
{
  chunk_starts const chunks{base};
  coalescing_free_list list;
  ASSERT_TRUE(list.insert({base, 64 << 20}, chunks));
  // Each round frees one size and asks for another: the recent free is never reused.
  for (std::size_t i = 1; i <= 32; ++i) {
    auto const block = list.take(i * kib, chunks);
    ASSERT_TRUE(block.has_value());
    ASSERT_TRUE(list.insert_recent(*block, chunks, i));
  }
  // The list has given up setting frees aside: this one merges with the free space after it.
  auto const block = list.take(100 * kib, chunks);
  ASSERT_TRUE(block.has_value());
  ASSERT_TRUE(list.insert_recent(*block, chunks, 100));
  EXPECT_FALSE(list.take_recent(100 * kib).has_value());
  EXPECT_EQ(list.block_count(), 1U);
}

}  // namespace
}  // namespace rmm::test
