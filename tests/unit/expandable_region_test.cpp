// SPDX-License-Identifier: Apache-2.0
// The expandable region under a remapping pool: a recycled granule's memory moves to the end of
// the range, mapping nothing new; the addresses it leaves are holes, which growth fills once the
// range is used up to its end; a region never maps more than its capacity. (Only free granules
// move, so what they held does not matter; the emulator maps fresh memory at each cuMemMap.)

#include "mr/detail/expandable_region.hpp"

#include <rmm/error.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace rmm::test {
namespace {

using rmm::mr::detail::expandable_region;

void* as_pointer(std::uintptr_t address) { return reinterpret_cast<void*>(address); }

/// Fills `bytes` at `address` with `value` and waits for it.
void fill(std::uintptr_t address, std::size_t bytes, int value)
{
  ASSERT_EQ(cudaMemset(as_pointer(address), value, bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

/// Whether every byte of [address, address + bytes) holds `value`.
bool holds(std::uintptr_t address, std::size_t bytes, unsigned char value)
{
  std::vector<unsigned char> host(bytes);
  if (cudaMemcpy(host.data(), as_pointer(address), bytes, cudaMemcpyDeviceToHost) != cudaSuccess) { return false; }
  for (auto const v : host) {
    if (v != value) { return false; }
  }
  return true;
}

/// A region of two granules' capacity with movable granules.
std::unique_ptr<expandable_region> small_region()
{
  EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);  // the primary context
  // The capacity is rounded to whole granules: ask for two of at most 2 MiB, get two.
  auto region = expandable_region::create(0, std::size_t{4} << 20, true, true);
  EXPECT_NE(region, nullptr);
  return region;
}

TEST(ExpandableRegion, ARecycledGranuleMovesToTheEndWithoutNewMemory)
{
  auto region = small_region();
  ASSERT_NE(region, nullptr);
  auto const g = region->granularity();
  auto const a = region->grow(g);
  auto const b = region->grow(g);
  ASSERT_EQ(b.start, a.start + g);
  auto const moved = region->recycle({a.start});
  ASSERT_EQ(moved.moved.size, g);
  EXPECT_TRUE(moved.stayed.empty());
  EXPECT_TRUE(moved.lost.empty());
  EXPECT_EQ(moved.moved.start, b.start + g) << "a granule moves to the end";
  EXPECT_EQ(region->mapped_bytes(), 2 * g) << "moving maps nothing new";
  fill(moved.moved.start, g, 0x3c);
  EXPECT_TRUE(holds(moved.moved.start, g, 0x3c)) << "the moved granule is usable where it is now";
  EXPECT_THROW((void)region->grow(g), rmm::out_of_memory) << "the capacity is two granules";
}

TEST(ExpandableRegion, OnceTheAddressesAreUsedUpGrowthFillsTheLowestHole)
{
  auto region = small_region();
  ASSERT_NE(region, nullptr);
  auto const g    = region->granularity();
  auto const base = region->grow(g).start;
  // Move the one granule to the end until the addresses run out: every step leaves a hole.
  std::uintptr_t granule = base;
  while (region->recyclable_bytes() >= g) {
    auto const moved = region->recycle({granule});
    ASSERT_EQ(moved.moved.size, g);
    granule = moved.moved.start;
  }
  EXPECT_EQ(region->recyclable_bytes(), 0U);
  fill(granule, g, 0x11);
  // Room under the capacity for one more granule, none at the end: it goes to the lowest hole.
  auto const grown = region->grow(g);
  EXPECT_EQ(grown.start, base) << "growth went to the lowest hole";
  EXPECT_EQ(grown.size, g);
  fill(grown.start, g, 0x22);
  EXPECT_TRUE(holds(grown.start, g, 0x22));
  EXPECT_TRUE(holds(granule, g, 0x11)) << "filling the hole touched the granule at the end";
  EXPECT_EQ(region->mapped_bytes(), 2 * g);
  EXPECT_THROW((void)region->grow(g), rmm::out_of_memory) << "the capacity is two granules";
  EXPECT_EQ(region->mapped_bytes(), 2 * g) << "a refused growth maps nothing";
}

}  // namespace
}  // namespace rmm::test
