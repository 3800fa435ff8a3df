// SPDX-License-Identifier: Apache-2.0
// Behaviour specific to the sub-allocators: coalescing across streams, growth and its limits,
// release, statistics, out-of-memory messages, and each resource's own options. Stream-ordering
// safety (reuse on the freeing stream, hand-over between streams, reclaiming) is decided
// deterministically in stream_safety_test.cpp.

#include "backend.hpp"
#include "device_memory.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace rmm::test {
namespace {

using ::testing::HasSubstr;
constexpr std::size_t MiB = std::size_t{1} << 20;

class Suballocator : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
};

TEST_F(Suballocator, FreeMemoryScatteredOverStreamsIsCoalescedBeforeGivingUp)
{
  // 16 MiB pool; 16 blocks of 1 MiB freed alternately on two streams leave each stream's arena
  // with 8 separate holes. An 8 MiB request fits only once the holes of both streams merge.
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 16 * MiB, 16 * MiB};
  rmm::cuda_stream a;
  rmm::cuda_stream b;
  rmm::cuda_stream c;
  std::vector<void*> blocks;
  for (int i = 0; i < 16; ++i) { blocks.push_back(pool.allocate(c, MiB)); }
  c.synchronize();
  for (int i = 0; i < 16; ++i) { pool.deallocate(i % 2 == 0 ? a : b, blocks[static_cast<std::size_t>(i)], MiB); }
  void* big = nullptr;
  EXPECT_NO_THROW(big = pool.allocate(c, 8 * MiB));
  pool.deallocate(c, big, 8 * MiB);
}

TEST_F(Suballocator, GrowsOnDemandAndReleasesFreeChunks)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  EXPECT_EQ(pool.pool_size(), 0U);
  rmm::cuda_stream stream;
  void* p = pool.allocate(stream, 100 * MiB);
  EXPECT_GE(pool.pool_size(), 100 * MiB);
  auto stats = pool.statistics();
  EXPECT_EQ(stats.allocated_bytes, 100 * MiB);
  EXPECT_EQ(stats.reserved_bytes, pool.pool_size());
  EXPECT_EQ(stats.upstream_chunks, 1U);
  pool.deallocate(stream, p, 100 * MiB);
  EXPECT_EQ(pool.release(), stats.reserved_bytes);
  EXPECT_EQ(pool.pool_size(), 0U);
  stats = pool.statistics();
  EXPECT_EQ(stats.free_bytes, 0U);
  EXPECT_EQ(stats.upstream_chunks, 0U);
}

TEST_F(Suballocator, APoolServingOneStreamKeepsItsFreeMemoryInOnePiece)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 64 * MiB, 64 * MiB};
  rmm::cuda_stream stream;
  void* half = pool.allocate(stream, 32 * MiB);
  pool.deallocate(stream, half, 32 * MiB);
  // The freed block merged with the rest of the reserve: the stream can have all of it at once.
  auto const stats = pool.statistics();
  EXPECT_EQ(stats.free_blocks, 1U);
  EXPECT_EQ(stats.largest_free_block, 64 * MiB);
  void* all = pool.allocate(stream, 64 * MiB);
  EXPECT_EQ(all, half);
  write_tag(all, 64 * MiB, 7, stream);
  pool.deallocate(stream, all, 64 * MiB);
  // Another stream still gets the memory, after the first one's work on it.
  rmm::cuda_stream other;
  void* most = pool.allocate(other, 48 * MiB);
  write_tag(most, 48 * MiB, 9, other);
  EXPECT_TRUE(has_tag(most, 48 * MiB, 9, other));
  pool.deallocate(other, most, 48 * MiB);
}

TEST_F(Suballocator, ReleaseKeepsMemoryThatIsInUse)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  rmm::cuda_stream stream;
  void* small = pool.allocate(stream, 1024);  // lands in the first 32 MiB of growth
  void* large = pool.allocate(stream, 64 * MiB);
  pool.deallocate(stream, large, 64 * MiB);
  auto const before   = pool.pool_size();
  auto const released = pool.release();
  EXPECT_GE(released, 32 * MiB) << "the growth made for the large block is free again";
  EXPECT_LE(released, before - 1024);
  EXPECT_EQ(pool.pool_size(), before - released);
  write_tag(small, 1024, 5, stream);
  EXPECT_TRUE(has_tag(small, 1024, 5, stream));
  pool.deallocate(stream, small, 1024);
}

TEST_F(Suballocator, StatisticsReportHolesAndFragmentation)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 8 * MiB, 8 * MiB};
  rmm::cuda_stream stream;
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) { blocks.push_back(pool.allocate(stream, MiB)); }
  for (int i = 0; i < 8; i += 2) {
    pool.deallocate(stream, blocks[static_cast<std::size_t>(i)], MiB);  // four 1 MiB holes
  }
  auto const stats = pool.statistics();
  EXPECT_EQ(stats.reserved_bytes, 8 * MiB);
  EXPECT_EQ(stats.allocated_bytes, 4 * MiB);
  EXPECT_EQ(stats.free_bytes, 4 * MiB);
  EXPECT_EQ(stats.free_blocks, 4U);
  EXPECT_EQ(stats.largest_free_block, MiB);
  EXPECT_DOUBLE_EQ(stats.fragmentation(), 0.75);

  try {
    (void)pool.allocate(stream, 2 * MiB);
    FAIL() << "2 MiB fit into 1 MiB holes";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_THAT(e.what(), HasSubstr("pool_memory_resource could not allocate 2.00 MiB"));
    EXPECT_THAT(e.what(), HasSubstr("holds 8.00 MiB from upstream (maximum 8.00 MiB)"));
    EXPECT_THAT(e.what(), HasSubstr("4.00 MiB is free in 4 block(s)"));
    EXPECT_THAT(e.what(), HasSubstr("largest free block is 1.00 MiB (fragmentation 75.0%)"));
  }
  for (int i = 1; i < 8; i += 2) { pool.deallocate(stream, blocks[static_cast<std::size_t>(i)], MiB); }
  EXPECT_EQ(pool.statistics().free_bytes, 8 * MiB);
  void* whole = pool.allocate(stream, 8 * MiB);  // all holes coalesce once their neighbours are free
  EXPECT_EQ(pool.statistics().free_blocks, 0U);
  pool.deallocate(stream, whole, 8 * MiB);
  EXPECT_EQ(pool.statistics().free_blocks, 1U);
}

TEST_F(Suballocator, InitialSizeAboveMaximumIsRejected)
{
  EXPECT_THROW((rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 2 * MiB, MiB}), rmm::logic_error);
}

TEST_F(Suballocator, UpstreamFailureIsNamedInTheError)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  try {
    (void)pool.allocate(rmm::cuda_stream_view{}, std::size_t{1} << 50);
    FAIL();
  } catch (rmm::out_of_memory const& e) {
    EXPECT_THAT(e.what(), HasSubstr("growing failed: "));
    // Over cudaMalloc, or mapping into the pool's address range where the device supports that.
    EXPECT_THAT(e.what(), ::testing::AnyOf(HasSubstr("cuda_memory_resource (cudaMalloc) could not allocate"),
                                           HasSubstr("would exceed the pool's address range")));
  }
  EXPECT_EQ(pool.pool_size(), 0U);
}

TEST_F(Suballocator, PoolReportsItsUpstreamAndCopiesShareState)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource pool{rmm::device_async_resource_ref{cuda}, 0, 64 * MiB};
  EXPECT_TRUE(pool.get_upstream_resource() == rmm::device_async_resource_ref{cuda});
  EXPECT_EQ(pool.maximum_pool_size(), 64 * MiB);
  auto copy = pool;
  void* p   = copy.allocate(rmm::cuda_stream_view{}, 4096);
  EXPECT_EQ(pool.statistics().allocated_bytes, 4096U);
  pool.deallocate(rmm::cuda_stream_view{}, p, 4096);
}

TEST_F(Suballocator, FixedSizeServesOneBlockPerRequest)
{
  rmm::mr::fixed_size_memory_resource fixed{rmm::mr::cuda_memory_resource{}, 1000, 4};
  EXPECT_EQ(fixed.get_block_size(), 1024U) << "rounded to 256";
  EXPECT_EQ(fixed.statistics().reserved_bytes, 4096U) << "one batch preallocated";
  rmm::cuda_stream stream;
  std::vector<void*> blocks;
  for (int i = 0; i < 6; ++i) { blocks.push_back(fixed.allocate(stream, 1 + static_cast<std::size_t>(i) * 100)); }
  EXPECT_EQ(fixed.statistics().reserved_bytes, 8192U) << "grew by one batch";
  EXPECT_EQ(fixed.statistics().allocated_bytes, 6144U);
  try {
    (void)fixed.allocate(stream, 1025);
    FAIL();
  } catch (rmm::bad_alloc const& e) {
    EXPECT_THAT(e.what(), HasSubstr("its blocks are 1.00 KiB"));
  }
  for (auto* p : blocks) { fixed.deallocate(stream, p, 1); }
  EXPECT_EQ(fixed.statistics().free_blocks, 8U);
}

TEST_F(Suballocator, FixedSizeRejectsZeroParameters)
{
  EXPECT_THROW((rmm::mr::fixed_size_memory_resource{rmm::mr::cuda_memory_resource{}, 0}), rmm::logic_error);
  EXPECT_THROW((rmm::mr::fixed_size_memory_resource{rmm::mr::cuda_memory_resource{}, 256, 0}), rmm::logic_error);
}

TEST_F(Suballocator, BinningRoutesBySizeAndFallsThrough)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::binning_memory_resource binning{rmm::device_async_resource_ref{cuda}};
  auto const sizes = binning.bin_sizes();
  ASSERT_EQ(sizes.size(), 13U);
  EXPECT_EQ(sizes.front(), 256U);
  EXPECT_EQ(sizes.back(), MiB);
  rmm::cuda_stream stream;
  void* small = binning.allocate(stream, 300);      // the 512 B bin
  void* large = binning.allocate(stream, 3 * MiB);  // falls through to cudaMalloc
  cudaPointerAttributes attributes{};
  RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, large));
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  write_tag(small, 300, 1, stream);
  write_tag(large, 3 * MiB, 2, stream);
  EXPECT_TRUE(has_tag(small, 300, 1, stream));
  EXPECT_TRUE(has_tag(large, 3 * MiB, 2, stream));
  binning.deallocate(stream, small, 300);
  binning.deallocate(stream, large, 3 * MiB);
}

TEST_F(Suballocator, BinningCustomBinsAndTheirRules)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::binning_memory_resource binning{rmm::device_async_resource_ref{cuda}, 10, 12};
  EXPECT_EQ(binning.bin_sizes(), (std::vector<std::size_t>{1024, 2048, 4096}));
  rmm::mr::pool_memory_resource pool{rmm::device_async_resource_ref{cuda}, 0};
  binning.add_bin(64 * 1024, pool);
  // A size with a bin keeps it, as RMM documents: neither call replaces the 2 KiB bin.
  EXPECT_NO_THROW(binning.add_bin(2048));
  EXPECT_NO_THROW(binning.add_bin(2048, pool));
  EXPECT_EQ(binning.bin_sizes(), (std::vector<std::size_t>{1024, 2048, 4096, 64 * 1024}));
  EXPECT_THROW(binning.add_bin(0), rmm::logic_error);
  void* small = binning.allocate(rmm::cuda_stream_view{}, 2000);
  EXPECT_EQ(pool.statistics().allocated_bytes, 0U) << "2 KiB requests still go to their fixed-size bin";
  binning.deallocate(rmm::cuda_stream_view{}, small, 2000);
  void* p = binning.allocate(rmm::cuda_stream_view{}, 10000);  // served by the pool bin
  EXPECT_EQ(pool.statistics().allocated_bytes, 10240U);
  binning.deallocate(rmm::cuda_stream_view{}, p, 10000);
  EXPECT_THROW(binning.add_bin(8192), rmm::logic_error) << "bins are fixed after the first allocation";
  EXPECT_THROW((rmm::mr::binning_memory_resource{rmm::device_async_resource_ref{cuda}, 12, 10}), rmm::logic_error);
  EXPECT_THROW((rmm::mr::binning_memory_resource{rmm::device_async_resource_ref{cuda}, 4, 10}), rmm::logic_error);
}

TEST_F(Suballocator, BinningWithExactlyTheGivenBins)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource pool{rmm::device_async_resource_ref{cuda}, 0};
  rmm::mr::binning_memory_resource binning{pool, std::vector<std::size_t>{3000, 100, 1000}};
  EXPECT_EQ(binning.bin_sizes(), (std::vector<std::size_t>{100, 1000, 3000}));
  auto const with_bins = pool.statistics().allocated_bytes;
  EXPECT_GE(with_bins, 8U * (100 + 1000 + 3000)) << "each bin holds a chunk of its blocks";
  void* small  = binning.allocate(rmm::cuda_stream_view{}, 900);
  void* small2 = binning.allocate(rmm::cuda_stream_view{}, 1000);
  EXPECT_EQ(pool.statistics().allocated_bytes, with_bins) << "served from the 1000-byte bin's chunk";
  void* large = binning.allocate(rmm::cuda_stream_view{}, 5000);
  EXPECT_EQ(pool.statistics().allocated_bytes - with_bins, 5120U) << "past every bin: the pool itself";
  binning.deallocate(rmm::cuda_stream_view{}, small, 900);
  binning.deallocate(rmm::cuda_stream_view{}, small2, 1000);
  binning.deallocate(rmm::cuda_stream_view{}, large, 5000);

  rmm::mr::binning_memory_resource no_bins{pool, std::vector<std::size_t>{}};
  EXPECT_TRUE(no_bins.bin_sizes().empty());
  void* p = no_bins.allocate(rmm::cuda_stream_view{}, 100);
  no_bins.deallocate(rmm::cuda_stream_view{}, p, 100);
  EXPECT_THROW((rmm::mr::binning_memory_resource{pool, std::vector<std::size_t>{256, 0}}), rmm::logic_error);
  // A size given twice gets one bin, as each size is added as add_bin adds it.
  EXPECT_EQ((rmm::mr::binning_memory_resource{pool, std::vector<std::size_t>{256, 256}}.bin_sizes()),
            (std::vector<std::size_t>{256}));
}

TEST_F(Suballocator, ArenaHasAFixedSizeAndGivesEachThreadItsOwnArena)
{
  rmm::mr::arena_memory_resource arena{rmm::mr::cuda_memory_resource{}, 64 * MiB};
  EXPECT_EQ(arena.statistics().reserved_bytes, 64 * MiB);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      RMM_CUDA_TRY(cudaSetDevice(0));
      for (int i = 0; i < 200; ++i) {
        void* p = arena.allocate(rmm::cuda_stream_view{}, 4096);  // default stream, per-thread arenas
        if (p == nullptr) { ++failures; }
        arena.deallocate(rmm::cuda_stream_view{}, p, 4096);
      }
    });
  }
  for (auto& t : threads) { t.join(); }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(arena.statistics().reserved_bytes, 64 * MiB) << "the arena never grows";
  try {
    (void)arena.allocate(rmm::cuda_stream_view{}, 65 * MiB);
    FAIL();
  } catch (rmm::out_of_memory const& e) {
    EXPECT_THAT(e.what(), HasSubstr("it does not grow"));
  }
}

TEST_F(Suballocator, ArenaFreesFromAnyThread)
{
  // RMM's arena aborts with "allocation not found" when one thread frees another's allocation.
  rmm::mr::arena_memory_resource arena{rmm::mr::cuda_memory_resource{}, 16 * MiB};
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i) {
    blocks.push_back(arena.allocate(rmm::cuda_stream_view{}, 1000 + static_cast<std::size_t>(i)));
  }
  std::thread other{[&] {
    RMM_CUDA_TRY(cudaSetDevice(0));
    for (int i = 0; i < 64; ++i) {
      arena.deallocate(rmm::cuda_stream_view{}, blocks[static_cast<std::size_t>(i)],
                       1000 + static_cast<std::size_t>(i));
    }
  }};
  other.join();
  EXPECT_EQ(arena.statistics().allocated_bytes, 0U);
}

TEST_F(Suballocator, CallbackResourceCallsBackAndRejectsNull)
{
  struct log {
    int allocations{0};
    int deallocations{0};
  } calls;
  static std::vector<char> storage(4096);
  rmm::mr::callback_memory_resource mr{
    [](std::size_t bytes, rmm::cuda_stream_view, void* arg) -> void* {
      ++static_cast<log*>(arg)->allocations;
      return bytes <= storage.size() ? storage.data() : nullptr;
    },
    [](void*, std::size_t, rmm::cuda_stream_view, void* arg) { ++static_cast<log*>(arg)->deallocations; }, &calls,
    &calls};
  void* p = mr.allocate(rmm::cuda_stream_view{}, 100);
  EXPECT_EQ(p, storage.data());
  mr.deallocate(rmm::cuda_stream_view{}, p, 100);
  EXPECT_EQ(calls.allocations, 1);
  EXPECT_EQ(calls.deallocations, 1);
  EXPECT_THROW((void)mr.allocate(rmm::cuda_stream_view{}, 8192), rmm::bad_alloc);
  EXPECT_THROW((rmm::mr::callback_memory_resource{nullptr, nullptr}), rmm::logic_error);
}

}  // namespace
}  // namespace rmm::test

namespace rmm::test {
namespace {

TEST(PoolGrowth, IsTheConstructorsChoiceAndNeverFallsBackSilently)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  rmm::mr::statistics_resource_adaptor counted{rmm::mr::cuda_memory_resource{}};
  // Asked for, virtual memory is used whatever the upstream: the adaptor below sees no growth.
  rmm::mr::pool_memory_resource mapped{counted, 0, std::nullopt, rmm::mr::pool_growth::virtual_memory};
  EXPECT_TRUE(mapped.grows_contiguously());
  void* p = mapped.allocate(rmm::cuda_stream_view{}, 4 * MiB);
  EXPECT_EQ(counted.get_bytes_counter().value, 0);
  mapped.deallocate(rmm::cuda_stream_view{}, p, 4 * MiB);
  // The default over an adaptor is the upstream, which then sees the growth.
  rmm::mr::pool_memory_resource chunked{counted, 0};
  EXPECT_FALSE(chunked.grows_contiguously());
  void* q = chunked.allocate(rmm::cuda_stream_view{}, 4 * MiB);
  EXPECT_GE(counted.get_bytes_counter().value, static_cast<std::int64_t>(4 * MiB));
  chunked.deallocate(rmm::cuda_stream_view{}, q, 4 * MiB);
  // A maximum of more than one mapping granule (2 MiB) maps the whole granules it holds, and never
  // holds more than the maximum.
  rmm::mr::pool_memory_resource bounded{rmm::mr::cuda_memory_resource{}, 0, 3 * MiB + 256,
                                        rmm::mr::pool_growth::virtual_memory};
  EXPECT_TRUE(bounded.grows_contiguously());
  void* r = bounded.allocate(rmm::cuda_stream_view{}, 2 * MiB);
  EXPECT_THROW((void)bounded.allocate(rmm::cuda_stream_view{}, MiB), rmm::out_of_memory);
  EXPECT_LE(bounded.pool_size(), 3 * MiB + 256);
  bounded.deallocate(rmm::cuda_stream_view{}, r, 2 * MiB);
  // Less than a granule cannot grow by mapping at all: refused, never a silent fallback.
  EXPECT_THROW(
    (rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0, MiB, rmm::mr::pool_growth::virtual_memory}),
    rmm::logic_error);
}

TEST(PoolGrowth, ASmallPoolMapsASixteenthOfItsSizeAtATimeALargeOne32MiB)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  constexpr std::size_t granule = 2 * MiB;
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, std::nullopt,
                                     rmm::mr::pool_growth::virtual_memory};
  rmm::cuda_stream stream;
  std::vector<void*> blocks;
  // What the pool holds beyond what is handed out stays within one growth step: a sixteenth of
  // the pool (at least a granule), not a fixed 32 MiB that would be most of a small pool.
  for (std::size_t live = MiB; live <= 160 * MiB; live += MiB) {
    blocks.push_back(pool.allocate(stream, MiB));
    auto const held = pool.pool_size();
    ASSERT_LE(held - live, held / 16 + granule) << "after " << live / MiB << " MiB handed out";
  }
  // Past 512 MiB, a step is the usual 32 MiB.
  blocks.push_back(pool.allocate(stream, 512 * MiB));
  auto const before = pool.pool_size();
  std::size_t added = 0;
  while (pool.pool_size() == before) {
    blocks.push_back(pool.allocate(stream, MiB));
    ++added;
    ASSERT_LE(added, 64U) << "the pool never grew";
  }
  EXPECT_EQ(pool.pool_size() - before, 32 * MiB);
  for (std::size_t i = 0; i < blocks.size(); ++i) { pool.deallocate(stream, blocks[i], i == 160 ? 512 * MiB : MiB); }
}

}  // namespace
}  // namespace rmm::test
