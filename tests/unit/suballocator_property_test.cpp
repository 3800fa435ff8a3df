// SPDX-License-Identifier: Apache-2.0
// Property tests of the sub-allocation engine behind pool, arena and fixed_size: long random
// sequences of allocations and frees over several streams and threads, checking after every step
// that live blocks never overlap, every reserved byte is either live or free, free neighbours
// coalesce, nothing straddles two upstream chunks, and alignment holds.

#include "host_upstream.hpp"
#include "mr/detail/stream_ordered_suballocator.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace rmm::test {
namespace {

using rmm::mr::detail::coalescing_free_list;
using rmm::mr::detail::fixed_block_store;
using rmm::mr::detail::memory_range;
using rmm::mr::detail::stream_ordered_suballocator;
using rmm::mr::detail::suballocator_options;

using live_map = std::map<std::uintptr_t, std::size_t>;  // start -> block size

suballocator_options pool_like(std::size_t initial, std::optional<std::size_t> maximum = {})
{
  suballocator_options o;
  o.name         = "property-pool";
  o.initial_size = initial;
  o.maximum_size = maximum;
  o.growth_step  = std::size_t{4} << 20;
  return o;
}

template <class Engine>
void check_invariants(Engine const& engine, live_map const& live, bool expect_coalesced = true)
{
  auto const chunks = engine.upstream_chunks();
  auto const owners = engine.free_ranges_by_owner();

  struct tagged {
    memory_range range;
    int owner;  // -1: live
  };
  std::vector<tagged> all;
  for (auto const& [start, size] : live) { all.push_back({{start, size}, -1}); }
  std::size_t free_total = 0;
  for (int o = 0; o < static_cast<int>(owners.size()); ++o) {
    for (auto const& r : owners[static_cast<std::size_t>(o)]) {
      all.push_back({r, o});
      free_total += r.size;
    }
  }
  std::sort(all.begin(), all.end(), [](auto const& a, auto const& b) { return a.range.start < b.range.start; });

  std::size_t reserved = 0;
  for (auto const& c : chunks) { reserved += c.size; }
  std::size_t accounted = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto const& r = all[i].range;
    ASSERT_TRUE(rmm::is_aligned(r.start, 256)) << "misaligned range at " << r.start;
    ASSERT_GT(r.size, 0U);
    if (i + 1 < all.size()) {
      ASSERT_LE(r.start + r.size, all[i + 1].range.start) << "overlap: [" << r.start << ", +" << r.size << ") owner "
                                                          << all[i].owner << " and next owner " << all[i + 1].owner;
    }
    // Inside exactly one chunk.
    auto chunk = std::upper_bound(chunks.begin(), chunks.end(), r.start,
                                  [](std::uintptr_t s, memory_range const& c) { return s < c.start; });
    ASSERT_NE(chunk, chunks.begin()) << "range below every chunk";
    --chunk;
    ASSERT_LE(r.start + r.size, chunk->start + chunk->size) << "range straddles or leaves its chunk";
    accounted += r.size;
  }
  ASSERT_EQ(accounted, reserved) << "live + free must equal reserved";
  auto const stats = engine.statistics();
  EXPECT_EQ(stats.reserved_bytes, reserved);
  EXPECT_EQ(stats.free_bytes, free_total);

  if (!expect_coalesced) { return; }
  for (auto ranges : owners) {
    std::sort(ranges.begin(), ranges.end(), [](auto const& a, auto const& b) { return a.start < b.start; });
    for (std::size_t i = 0; i + 1 < ranges.size(); ++i) {
      bool const touching = ranges[i].start + ranges[i].size == ranges[i + 1].start;
      bool const chunk_edge =
        std::any_of(chunks.begin(), chunks.end(), [&](auto const& c) { return c.start == ranges[i + 1].start; });
      ASSERT_FALSE(touching && !chunk_edge)
        << "adjacent free ranges of one owner were not coalesced at " << ranges[i + 1].start;
    }
  }
}

std::size_t random_size(std::mt19937_64& rng)
{
  switch (rng() % 4) {
    case 0: return 1 + rng() % 512;                      // tiny
    case 1: return 1 + rng() % (64 << 10);               // small
    case 2: return 1 + rng() % (1 << 20);                // medium
    default: return 1 + rng() % (std::size_t{6} << 20);  // large: above the growth step
  }
}

TEST(SuballocatorProperties, RandomSequenceOverStreamsKeepsEveryInvariant)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  stream_ordered_suballocator<coalescing_free_list> engine{host_upstream{}, pool_like(std::size_t{8} << 20),
                                                           [] { return coalescing_free_list{}; }};
  std::vector<rmm::cuda_stream> streams(4);
  std::mt19937_64 rng{1234};
  live_map live;
  for (int step = 0; step < 3000; ++step) {
    auto& stream = streams[rng() % streams.size()];
    if (live.empty() || rng() % 100 < 55) {
      auto const bytes = random_size(rng);
      auto* ptr        = engine.allocate(bytes, stream);
      live.emplace(reinterpret_cast<std::uintptr_t>(ptr), engine.block_size(bytes));
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      engine.deallocate(reinterpret_cast<void*>(it->first), it->second, stream);
      live.erase(it);
    }
    ASSERT_NO_FATAL_FAILURE(check_invariants(engine, live)) << "after step " << step;
  }
  for (auto const& [start, size] : live) { engine.deallocate(reinterpret_cast<void*>(start), size, streams[0]); }
  live.clear();
  check_invariants(engine, live);
  // With everything free, release() returns every chunk.
  auto const reserved = engine.reserved_bytes();
  EXPECT_EQ(engine.release(), reserved);
  EXPECT_EQ(engine.reserved_bytes(), 0U);
}

TEST(SuballocatorProperties, ManyThreadsOwnStreamsAndCrossThreadFrees)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  stream_ordered_suballocator<coalescing_free_list> engine{host_upstream{}, pool_like(std::size_t{16} << 20),
                                                           [] { return coalescing_free_list{}; }};
  constexpr int threads = 8;
  std::mutex shared_mutex;
  live_map shared;  // blocks any thread may free
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      RMM_CUDA_TRY(cudaSetDevice(0));
      rmm::cuda_stream stream;
      std::mt19937_64 rng(static_cast<std::uint64_t>(t) + 99);
      live_map own;
      for (int i = 0; i < 1500; ++i) {
        auto const choice = rng() % 100;
        if (own.empty() || choice < 50) {
          auto const bytes = random_size(rng);
          auto* ptr        = engine.allocate(bytes, stream);
          auto const start = reinterpret_cast<std::uintptr_t>(ptr);
          auto const size  = engine.block_size(bytes);
          if (rng() % 4 == 0) {
            std::lock_guard lock{shared_mutex};
            if (!shared.emplace(start, size).second) { ++failures; }
          } else if (!own.emplace(start, size).second) {
            ++failures;
          }
        } else if (choice < 85) {
          auto it = own.begin();
          std::advance(it, static_cast<long>(rng() % own.size()));
          engine.deallocate(reinterpret_cast<void*>(it->first), it->second, stream);
          own.erase(it);
        } else {
          std::pair<std::uintptr_t, std::size_t> victim{};
          {
            std::lock_guard lock{shared_mutex};
            if (shared.empty()) { continue; }
            auto it = shared.begin();
            std::advance(it, static_cast<long>(rng() % shared.size()));
            victim = *it;
            shared.erase(it);
          }
          stream.synchronize();  // the block may have been used on its allocating thread's stream
          engine.deallocate(reinterpret_cast<void*>(victim.first), victim.second, stream);
        }
      }
      stream.synchronize();
      for (auto const& [start, size] : own) {
        engine.deallocate(reinterpret_cast<void*>(start), size, rmm::cuda_stream_view{});
      }
    });
  }
  for (auto& w : workers) { w.join(); }
  EXPECT_EQ(failures.load(), 0) << "a block was handed out twice";
  check_invariants(engine, shared);
}

TEST(SuballocatorProperties, FixedBlocksStayWholeAndAccounted)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  suballocator_options o;
  o.name            = "property-fixed";
  o.granularity     = 4096;
  o.largest_request = 4096;
  o.growth_step     = 4096 * 16;
  o.initial_size    = 4096 * 16;
  stream_ordered_suballocator<fixed_block_store> engine{host_upstream{}, o, [] { return fixed_block_store{4096}; }};
  std::vector<rmm::cuda_stream> streams(3);
  std::mt19937_64 rng{7};
  live_map live;
  for (int step = 0; step < 2000; ++step) {
    auto& stream = streams[rng() % streams.size()];
    if (live.empty() || rng() % 100 < 60) {
      auto* ptr = engine.allocate(1 + rng() % 4096, stream);
      ASSERT_TRUE(live.emplace(reinterpret_cast<std::uintptr_t>(ptr), 4096).second);
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      engine.deallocate(reinterpret_cast<void*>(it->first), 4096, stream);
      live.erase(it);
    }
    ASSERT_NO_FATAL_FAILURE(check_invariants(engine, live, false)) << "after step " << step;
  }
  EXPECT_THROW((void)engine.allocate(4097, streams[0]), rmm::bad_alloc);
}

TEST(SuballocatorProperties, NeverGrowsPastTheMaximum)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  constexpr std::size_t maximum = std::size_t{24} << 20;
  stream_ordered_suballocator<coalescing_free_list> engine{host_upstream{}, pool_like(0, maximum),
                                                           [] { return coalescing_free_list{}; }};
  rmm::cuda_stream stream;
  std::mt19937_64 rng{5};
  live_map live;
  int failures = 0;
  for (int step = 0; step < 2000; ++step) {
    if (live.empty() || rng() % 100 < 60) {
      auto const bytes = random_size(rng);
      try {
        auto* ptr = engine.allocate(bytes, stream);
        live.emplace(reinterpret_cast<std::uintptr_t>(ptr), engine.block_size(bytes));
      } catch (rmm::out_of_memory const&) {
        ++failures;
      }
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      engine.deallocate(reinterpret_cast<void*>(it->first), it->second, stream);
      live.erase(it);
    }
    ASSERT_LE(engine.reserved_bytes(), maximum);
  }
  EXPECT_GT(failures, 0) << "the sequence should have hit the maximum";
  check_invariants(engine, live);
}

}  // namespace
}  // namespace rmm::test
