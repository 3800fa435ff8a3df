// SPDX-License-Identifier: Apache-2.0
// The sub-allocators' per-stream arenas over a program's life: streams created and dropped freely,
// many threads on many streams, double frees, impossible sizes.

#include "device_memory.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace rmm::test {
namespace {

using ::testing::HasSubstr;
constexpr std::size_t KiB = std::size_t{1} << 10;
constexpr std::size_t MiB = std::size_t{1} << 20;

class StreamArenas : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
};

/// Creates `count` streams one after the other; each allocates and frees a few blocks, then goes.
void churn_streams(rmm::mr::pool_memory_resource& pool, int count)
{
  for (int s = 0; s < count; ++s) {
    rmm::cuda_stream stream;
    std::array<void*, 4> blocks{};
    for (std::size_t i = 0; i < blocks.size(); ++i) { blocks[i] = pool.allocate(stream, (i + 1) * 64 * KiB); }
    for (std::size_t i = 0; i < blocks.size(); ++i) { pool.deallocate(stream, blocks[i], (i + 1) * 64 * KiB); }
  }
}

TEST_F(StreamArenas, ArenasOfDroppedStreamsDoNotAccumulate)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  churn_streams(pool, 1500);
  auto const stats = pool.statistics();
  EXPECT_LE(stats.stream_arenas, 260U) << "every stream ever seen kept an arena";
  // Nothing is live: the memory of dropped streams is reused, not grown past.
  EXPECT_LE(stats.reserved_bytes, 64 * MiB);
  EXPECT_EQ(stats.allocated_bytes, 0U);
}

TEST_F(StreamArenas, ReleaseGivesEmptyArenasBack)
{
  // Enough up front that no allocation misses: a miss may retire arenas before release() does.
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 64 * MiB};
  std::vector<rmm::cuda_stream> streams(10);
  for (auto& s : streams) {
    void* p = pool.allocate(s, MiB);
    pool.deallocate(s, p, MiB);
  }
  EXPECT_EQ(pool.statistics().stream_arenas, 10U);
  pool.release();
  EXPECT_EQ(pool.statistics().stream_arenas, 0U);
  // A stream whose arena was given back gets a new one and works as before.
  void* p = pool.allocate(streams[3], MiB);
  write_tag(p, MiB, 0x5A, streams[3]);
  EXPECT_TRUE(has_tag(p, MiB, 0x5A, streams[3]));
  pool.deallocate(streams[3], p, MiB);
}

TEST_F(StreamArenas, PerThreadDefaultStreamsOfExitedThreadsDoNotAccumulate)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  for (int round = 0; round < 40; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&pool] {
        RMM_CUDA_TRY(cudaSetDevice(0));
        void* p = pool.allocate(rmm::cuda_stream_per_thread, 256 * KiB);
        pool.deallocate(rmm::cuda_stream_per_thread, p, 256 * KiB);
      });
    }
    for (auto& t : threads) { t.join(); }
  }
  EXPECT_LE(pool.statistics().stream_arenas, 260U);
  EXPECT_LE(pool.pool_size(), 64 * MiB);
}

TEST_F(StreamArenas, DoubleFreeIsReportedAndNeverHandsTheBlockOutTwice)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 8 * MiB, 8 * MiB};
  rmm::cuda_stream stream;
  void* a = pool.allocate(stream, MiB);
  void* b = pool.allocate(stream, MiB);  // keeps `a` from merging with the free rest
  pool.deallocate(stream, a, MiB);
  ::testing::internal::CaptureStderr();
  pool.deallocate(stream, a, MiB);
  auto const log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("free already"));
  EXPECT_THAT(log, HasSubstr("double free"));
  void* first  = pool.allocate(stream, MiB);
  void* second = pool.allocate(stream, MiB);
  EXPECT_NE(first, second);
  auto const stats = pool.statistics();
  EXPECT_EQ(stats.allocated_bytes, 3 * MiB);
  EXPECT_EQ(stats.free_bytes, 5 * MiB);
  for (void* p : {first, second, b}) { pool.deallocate(stream, p, MiB); }
  EXPECT_EQ(pool.statistics().allocated_bytes, 0U);
}

TEST_F(StreamArenas, ImpossibleSizesAreOutOfMemoryAndLeaveThePoolIntact)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 4 * MiB};
  rmm::cuda_stream stream;
  auto const max = std::numeric_limits<std::size_t>::max();
  for (std::size_t bytes : {max, max - 255, max - 256, max / 2 + 1}) {
    EXPECT_THROW((void)pool.allocate(stream, bytes), rmm::out_of_memory) << bytes;
  }
  void* a = pool.allocate(stream, MiB);
  void* b = pool.allocate(stream, MiB);
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.statistics().allocated_bytes, 2 * MiB);
  pool.deallocate(stream, a, MiB);
  pool.deallocate(stream, b, MiB);
}

TEST_F(StreamArenas, ArenaResourceThreadsComeAndGoWithoutAccumulatingArenas)
{
  rmm::mr::arena_memory_resource arena{rmm::mr::cuda_memory_resource{}, 64 * MiB};
  for (int round = 0; round < 40; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&arena] {
        RMM_CUDA_TRY(cudaSetDevice(0));
        void* p = arena.allocate(rmm::cuda_stream_view{}, 256 * KiB);
        arena.deallocate(rmm::cuda_stream_view{}, p, 256 * KiB);
      });
    }
    for (auto& t : threads) { t.join(); }
  }
  EXPECT_LE(arena.statistics().stream_arenas, 260U);
}

/// Threads sharing one stream share its arena: memory one of them grows the pool by lands there,
/// where another may take it first. Neither may be told that the pool is out of memory.
TEST_F(StreamArenas, ThreadsSharingAStreamAreServedWhileTheyAllGrowThePool)
{
  std::atomic<int> failures{0};
  for (unsigned round = 0; round < 20; ++round) {  // a race: each round is one more chance to lose it
    rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
    rmm::cuda_stream shared;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 16; ++t) {
      threads.emplace_back([&, t] {
        RMM_CUDA_TRY(cudaSetDevice(0));
        std::mt19937 rng{round * 16 + t + 1};
        std::vector<std::pair<void*, std::size_t>> blocks;
        for (int op = 0; op < 400; ++op) {
          if (blocks.size() < 24 && (blocks.empty() || rng() % 100 < 60)) {
            auto const size = 256 + rng() % (4 * MiB);
            try {
              blocks.emplace_back(pool.allocate(shared.view(), size), size);
            } catch (rmm::out_of_memory const&) {
              ++failures;
            }
          } else {
            auto const i = rng() % blocks.size();
            pool.deallocate(shared.view(), blocks[i].first, blocks[i].second);
            blocks[i] = blocks.back();
            blocks.pop_back();
          }
        }
        for (auto const& [ptr, size] : blocks) { pool.deallocate(shared.view(), ptr, size); }
      });
    }
    for (auto& t : threads) { t.join(); }
  }
  EXPECT_EQ(failures.load(), 0) << "allocations refused while the device had room";
}

/// 16 threads on random streams (their own, 8 shared, per-thread, legacy), up to 32 live blocks
/// each. The pool must not grow far past what the threads hold.
TEST_F(StreamArenas, ManyThreadsOnManyStreamsReserveAtMostHalfMoreThanTheirPeak)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  std::vector<rmm::cuda_stream> shared(8);
  std::atomic<std::size_t> live{0};
  std::atomic<std::size_t> peak_live{0};
  std::atomic<std::size_t> peak_reserved{0};
  auto const raise = [](std::atomic<std::size_t>& peak, std::size_t value) {
    auto seen = peak.load();
    while (value > seen && !peak.compare_exchange_weak(seen, value)) {}
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      RMM_CUDA_TRY(cudaSetDevice(0));
      rmm::cuda_stream own;
      std::mt19937 rng{t + 1};
      struct block {
        void* ptr;
        std::size_t size;
        rmm::cuda_stream_view stream;
      };
      std::vector<block> blocks;
      for (int op = 0; op < 600; ++op) {
        if (blocks.size() < 32 && (blocks.empty() || rng() % 100 < 55)) {
          auto const w      = rng() % 11;
          auto const stream = w < 8    ? shared[w].view()
                              : w == 8 ? rmm::cuda_stream_per_thread
                              : w == 9 ? rmm::cuda_stream_legacy
                                       : own.view();
          auto const size   = 256 + rng() % (4 * MiB);
          blocks.push_back({pool.allocate(stream, size), size, stream});
          raise(peak_live, live.fetch_add(size) + size);
          raise(peak_reserved, pool.pool_size());
        } else {
          auto const i = rng() % blocks.size();
          pool.deallocate(blocks[i].stream, blocks[i].ptr, blocks[i].size);
          live.fetch_sub(blocks[i].size);
          blocks[i] = blocks.back();
          blocks.pop_back();
        }
      }
      for (auto const& b : blocks) {  // other threads go on: what this one held is no longer live
        pool.deallocate(b.stream, b.ptr, b.size);
        live.fetch_sub(b.size);
      }
    });
  }
  for (auto& t : threads) { t.join(); }
  RMM_CUDA_TRY(cudaDeviceSynchronize());
  RecordProperty("peak_live_bytes", std::to_string(peak_live.load()));
  RecordProperty("peak_reserved_bytes", std::to_string(peak_reserved.load()));
  // Growth is in steps of up to 32 MiB: allow one step on top of 1.5 times the peak.
  EXPECT_LE(peak_reserved.load(), peak_live.load() * 3 / 2 + 32 * MiB)
    << "peak live " << peak_live.load() / MiB << " MiB, peak reserved " << peak_reserved.load() / MiB << " MiB";
}

}  // namespace
}  // namespace rmm::test
