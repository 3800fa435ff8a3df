// SPDX-License-Identifier: Apache-2.0
// The free list's bookkeeping runs out of host memory: nothing it holds is lost or corrupted.
// This binary replaces the global operator new so that one chosen allocation fails.

#include "mr/detail/address_map.hpp"
#include "mr/detail/coalescing_free_list.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> fail_next_allocation{false};
}  // namespace

// Not inlined: GCC would otherwise pair the std::free inside with the new at a call site and call
// the (legal) replacement a mismatched deallocation.
[[gnu::noinline]] void* operator new(std::size_t bytes)
{
  if (fail_next_allocation.exchange(false)) { throw std::bad_alloc{}; }
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) { return p; }
  throw std::bad_alloc{};
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace rmm::test {
namespace {

using rmm::mr::detail::address_map;
using rmm::mr::detail::chunk_starts;
using rmm::mr::detail::coalescing_free_list;

constexpr std::uintptr_t base = 0x10000000;

TEST(FreeListOutOfMemory, AMapThatCannotGrowKeepsEveryEntry)
{
  int value = 0;
  address_map<int> map{64};
  for (std::uintptr_t i = 1; i <= 32; ++i) { map.insert(base + i * 256, &value); }
  fail_next_allocation = true;
  EXPECT_THROW(map.insert(base + 33 * 256, &value), std::bad_alloc);  // the 33rd needs a larger table
  EXPECT_EQ(map.size(), 32U);
  for (std::uintptr_t i = 1; i <= 32; ++i) { EXPECT_EQ(map.find(base + i * 256), &value); }
  EXPECT_EQ(map.find(base + 33 * 256), nullptr);
  map.insert(base + 33 * 256, &value);
  EXPECT_EQ(map.find(base + 33 * 256), &value);
}

TEST(FreeListOutOfMemory, AFreeThatCannotBeMergedLosesNothingSetAside)
{
  chunk_starts const chunks{base};
  coalescing_free_list list;
  auto const n    = coalescing_free_list::recent_capacity;
  auto const size = std::size_t{4096};
  // Apart from each other: merging the oldest needs a node of its own, the list's first.
  for (std::uintptr_t i = 0; i < n; ++i) {
    ASSERT_TRUE(list.insert_recent({base + i * 2 * size, size}, chunks, i + 1));
  }
  fail_next_allocation = true;
  EXPECT_THROW((void)list.insert_recent({base + n * 2 * size, size}, chunks, n + 1), std::bad_alloc);
  EXPECT_EQ(list.free_bytes(), n * size);
  EXPECT_EQ(list.block_count(), n);

  ASSERT_TRUE(list.insert_recent({base + n * 2 * size, size}, chunks, n + 1));
  list.spill(chunks);
  EXPECT_EQ(list.free_bytes(), (n + 1) * size);
  EXPECT_EQ(list.block_count(), n + 1);
  for (std::uintptr_t i = 0; i <= n; ++i) {  // each one taken back exactly once
    auto const taken = list.take(size, chunks);
    ASSERT_TRUE(taken.has_value());
  }
  EXPECT_FALSE(list.take(size, chunks).has_value());
}

}  // namespace
}  // namespace rmm::test
