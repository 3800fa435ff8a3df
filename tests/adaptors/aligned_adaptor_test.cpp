// SPDX-License-Identifier: Apache-2.0
// aligned_resource_adaptor: large alignments from 256-byte-aligned upstreams.
#include "device_memory.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace {

using rmm::mr::aligned_resource_adaptor;

bool aligned_to(void* ptr, std::size_t alignment) { return reinterpret_cast<std::uintptr_t>(ptr) % alignment == 0; }

TEST(AlignedAdaptor, AllocationsFromTheThresholdUpGetTheAlignment)
{
  rmm::mr::statistics_resource_adaptor upstream{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  aligned_resource_adaptor mr{upstream, 1 << 16, 1 << 20};
  EXPECT_EQ(mr.alignment(), std::size_t{1} << 16);
  EXPECT_EQ(mr.alignment_threshold(), std::size_t{1} << 20);
  std::vector<std::pair<void*, std::size_t>> blocks;
  // Small blocks in between shift the upstream's addresses off the large alignment.
  for (std::size_t i = 0; i < 20; ++i) {
    std::size_t const large = (std::size_t{1} << 20) + i * 256;
    blocks.emplace_back(mr.allocate_sync(large), large);
    EXPECT_TRUE(aligned_to(blocks.back().first, 1 << 16)) << blocks.back().first;
    blocks.emplace_back(mr.allocate_sync(256), 256);
  }
  EXPECT_EQ(upstream.get_bytes_counter().value,
            static_cast<std::int64_t>(20 * 256 + 20 * ((1 << 20) + (1 << 16) - 256)) + 256 * 190)
    << "large blocks take alignment - 256 extra bytes, small ones pass through";
  rmm::cuda_stream_view stream{};
  for (auto [ptr, size] : blocks) {
    rmm::test::write_tag(ptr, size, 0x5a, stream);
    EXPECT_TRUE(rmm::test::has_tag(ptr, size, 0x5a, stream));
  }
  for (auto [ptr, size] : blocks) { mr.deallocate_sync(ptr, size); }
  EXPECT_EQ(upstream.get_bytes_counter().value, 0) << "every block went back to the upstream whole";
}

TEST(AlignedAdaptor, BelowTheThresholdOrAtTheDefaultAlignmentNothingChanges)
{
  rmm::mr::statistics_resource_adaptor upstream{rmm::mr::cuda_memory_resource{}};
  aligned_resource_adaptor large_only{upstream, 4096, 1 << 20};
  void* small = large_only.allocate_sync(1000);
  EXPECT_EQ(upstream.get_bytes_counter().value, 1000);
  large_only.deallocate_sync(small, 1000);

  aligned_resource_adaptor plain{upstream};
  void* p = plain.allocate_sync(1 << 20);
  EXPECT_EQ(upstream.get_bytes_counter().value, 1 << 20);
  plain.deallocate_sync(p, 1 << 20);
  EXPECT_EQ(upstream.get_bytes_counter().value, 0);
}

TEST(AlignedAdaptor, ASizeThatCannotBePaddedIsOutOfMemory)
{
  rmm::mr::statistics_resource_adaptor upstream{rmm::mr::cuda_memory_resource{}};
  aligned_resource_adaptor mr{upstream, 4096};
  EXPECT_THROW((void)mr.allocate_sync(std::numeric_limits<std::size_t>::max() - 100), rmm::out_of_memory);
  EXPECT_EQ(upstream.get_allocations_counter().total, 0) << "the wrapped size must never reach the upstream";
}

TEST(AlignedAdaptor, AZeroByteAllocationNeverOverlapsItsNeighbours)
{
  // A 4 MiB pool that cannot grow, under 4 KiB alignment for every size (the default threshold).
  constexpr std::size_t pool_size = std::size_t{4} << 20;
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, pool_size, pool_size};
  aligned_resource_adaptor mr{pool, 4096};
  rmm::cuda_stream_view stream{};
  // 512 bytes take 512 + 3840 from the pool, so the zero-byte request after them starts 256 bytes
  // past a 4 KiB boundary, and the 4 KiB block after it starts on one.
  std::vector<std::pair<void*, std::size_t>> blocks;
  for (std::size_t const size : std::vector<std::size_t>{512, 0, 4096, 0, 100}) {
    blocks.emplace_back(mr.allocate(stream, size), size);
  }
  for (auto const& [zero, zero_size] : blocks) {
    if (zero_size != 0 || zero == nullptr) { continue; }
    EXPECT_TRUE(aligned_to(zero, 4096)) << zero;
    for (auto const& [other, other_size] : blocks) {
      if (other_size == 0) { continue; }
      auto const at    = reinterpret_cast<std::uintptr_t>(zero);
      auto const start = reinterpret_cast<std::uintptr_t>(other);
      EXPECT_FALSE(at >= start && at < start + other_size)
        << "the zero-byte allocation " << zero << " points into the " << other_size << "-byte block at " << other;
    }
  }
  for (auto const& [ptr, size] : blocks) { rmm::test::write_tag(ptr, size, 0x6b, stream); }
  for (auto const& [ptr, size] : blocks) {
    EXPECT_TRUE(rmm::test::has_tag(ptr, size, 0x6b, stream)) << size << " bytes at " << ptr;
  }
  // Freed in an order that returns the neighbour before the zero-byte allocation.
  for (std::size_t const i : {2U, 1U, 4U, 3U, 0U}) { mr.deallocate(stream, blocks[i].first, blocks[i].second); }
  stream.synchronize();

  auto const idle = pool.statistics();
  EXPECT_EQ(idle.allocated_bytes, 0U);
  EXPECT_EQ(idle.free_bytes, pool_size);
  // A fully idle pool holds every byte free again: it serves its whole size in one block (after
  // coalescing), then in two halves.
  void* whole = pool.allocate(stream, pool_size);
  pool.deallocate(stream, whole, pool_size);
  void* first  = pool.allocate(stream, pool_size / 2);
  void* second = pool.allocate(stream, pool_size / 2);
  EXPECT_NE(first, second);
  pool.deallocate(stream, first, pool_size / 2);
  pool.deallocate(stream, second, pool_size / 2);
}

TEST(AlignedAdaptor, RejectsAnAlignmentThatIsNotAPowerOfTwo)
{
  try {
    aligned_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, 3000};
    FAIL() << "constructed with alignment 3000";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("3000"), std::string::npos) << e.what();
  }
}

}  // namespace
