// SPDX-License-Identifier: Apache-2.0
// statistics_resource_adaptor: exact counters after random sequences, the counter stack, threads.
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

namespace {

using rmm::mr::statistics_resource_adaptor;
using counter = statistics_resource_adaptor::counter;

void expect_counter(counter const& actual, std::int64_t value, std::int64_t peak, std::int64_t total, char const* what)
{
  EXPECT_EQ(actual.value, value) << what;
  EXPECT_EQ(actual.peak, peak) << what;
  EXPECT_EQ(actual.total, total) << what;
}

TEST(StatisticsAdaptor, CountersAreExactAfterARandomSequence)
{
  statistics_resource_adaptor mr{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  std::mt19937_64 rng{42};
  std::vector<std::pair<void*, std::size_t>> live;
  std::int64_t bytes{0}, peak_bytes{0}, total_bytes{0}, count{0}, peak_count{0}, total_count{0};
  for (int step = 0; step < 5000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      std::size_t const size = rng() % (1U << 20);
      live.emplace_back(mr.allocate_sync(size), size);
      bytes += static_cast<std::int64_t>(size);
      total_bytes += static_cast<std::int64_t>(size);
      ++count;
      ++total_count;
      peak_bytes = std::max(peak_bytes, bytes);
      peak_count = std::max(peak_count, count);
    } else {
      auto const victim = rng() % live.size();
      auto [ptr, size]  = live[victim];
      live[victim]      = live.back();
      live.pop_back();
      mr.deallocate_sync(ptr, size);
      bytes -= static_cast<std::int64_t>(size);
      --count;
    }
    if (step % 997 == 0) {
      expect_counter(mr.get_bytes_counter(), bytes, peak_bytes, total_bytes, "bytes");
      expect_counter(mr.get_allocations_counter(), count, peak_count, total_count, "allocations");
    }
  }
  for (auto [ptr, size] : live) { mr.deallocate_sync(ptr, size); }
  expect_counter(mr.get_bytes_counter(), 0, peak_bytes, total_bytes, "bytes at the end");
  expect_counter(mr.get_allocations_counter(), 0, peak_count, total_count, "allocations at the end");
}

TEST(StatisticsAdaptor, PushedLevelsMeasureAPhaseAndFoldBackOnPop)
{
  statistics_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
  void* a          = mr.allocate_sync(1000);
  auto const below = mr.push_counters();
  expect_counter(below.first, 1000, 1000, 1000, "returned level below");
  expect_counter(mr.get_bytes_counter(), 0, 0, 0, "fresh level");

  void* b = mr.allocate_sync(300);
  void* c = mr.allocate_sync(200);
  mr.deallocate_sync(c, 200);
  expect_counter(mr.get_bytes_counter(), 300, 500, 500, "phase");
  expect_counter(mr.get_allocations_counter(), 1, 2, 2, "phase allocations");

  auto const phase = mr.pop_counters();
  expect_counter(phase.first, 300, 500, 500, "popped");
  // The base level peaked at 1000 outstanding + 500 reached during the phase.
  expect_counter(mr.get_bytes_counter(), 1300, 1500, 1500, "base after pop");
  expect_counter(mr.get_allocations_counter(), 2, 3, 3, "base allocations after pop");

  mr.deallocate_sync(a, 1000);
  mr.deallocate_sync(b, 300);
  expect_counter(mr.get_bytes_counter(), 0, 1500, 1500, "base at the end");
}

TEST(StatisticsAdaptor, FreeingInsideAPhaseWhatWasAllocatedBeforeGoesNegativeThenBalances)
{
  statistics_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
  void* a = mr.allocate_sync(256);
  mr.push_counters();
  mr.deallocate_sync(a, 256);
  EXPECT_EQ(mr.get_bytes_counter().value, -256);
  mr.pop_counters();
  expect_counter(mr.get_bytes_counter(), 0, 256, 256, "base");
}

TEST(StatisticsAdaptor, PoppingTheBaseLevelIsAnError)
{
  statistics_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
  try {
    mr.pop_counters();
    FAIL() << "popping the base level succeeded";
  } catch (std::out_of_range const& e) {
    EXPECT_NE(std::string{e.what()}.find("cannot pop the last counter pair"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("push_counters"), std::string::npos) << e.what();
  }
  expect_counter(mr.get_bytes_counter(), 0, 0, 0, "unchanged");
}

TEST(StatisticsAdaptor, FailedAllocationsAreNotCounted)
{
  statistics_resource_adaptor mr{rmm::mr::limiting_resource_adaptor{rmm::mr::cuda_memory_resource{}, 4096}};
  void* a = mr.allocate_sync(4096);
  EXPECT_THROW((void)mr.allocate_sync(1), rmm::out_of_memory);
  expect_counter(mr.get_allocations_counter(), 1, 1, 1, "allocations");
  expect_counter(mr.get_bytes_counter(), 4096, 4096, 4096, "bytes");
  mr.deallocate_sync(a, 4096);
}

TEST(StatisticsAdaptor, ManyThreadsGiveExactTotals)
{
  statistics_resource_adaptor mr{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  constexpr int threads = 8;
  constexpr int rounds  = 2000;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&mr, t] {
      rmm::cuda_stream stream;
      for (int i = 0; i < rounds; ++i) {
        std::size_t const size = 256 * static_cast<std::size_t>(t + 1);
        void* p                = mr.allocate(stream, size);
        mr.deallocate(stream, p, size);
      }
      stream.synchronize();
    });
  }
  for (auto& w : workers) { w.join(); }
  std::int64_t expected_total{0};
  for (int t = 0; t < threads; ++t) { expected_total += 256 * (t + 1) * rounds; }
  auto const bytes = mr.get_bytes_counter();
  EXPECT_EQ(bytes.value, 0);
  EXPECT_EQ(bytes.total, expected_total);
  EXPECT_LE(bytes.peak, 256 * threads * (threads + 1) / 2);
  EXPECT_EQ(mr.get_allocations_counter().total, threads * rounds);
  EXPECT_LE(mr.get_allocations_counter().peak, threads);
}

TEST(StatisticsAdaptor, CopiesShareCountersAndExposeTheUpstream)
{
  rmm::mr::cuda_memory_resource cuda;
  statistics_resource_adaptor mr{cuda};
  auto copy = mr;
  void* p   = copy.allocate_sync(512);
  EXPECT_EQ(mr.get_bytes_counter().value, 512);
  EXPECT_TRUE(mr == copy);
  EXPECT_FALSE(mr == statistics_resource_adaptor{cuda});
  EXPECT_TRUE(mr.get_upstream_resource() == rmm::device_async_resource_ref{cuda});
  mr.deallocate_sync(p, 512);
}

}  // namespace
