// SPDX-License-Identifier: Apache-2.0
// Many streams: what the pool reserves when threads allocate on many streams, and what the slow
// path costs once a program has created and dropped many streams.
//
// - multi_stream_reservation: 16 threads allocate and free on random streams (their own, one of 8
//   shared ones, the per-thread default stream, the legacy stream), keeping up to 48 blocks of
//   256 B - 4 MiB live each, frees on the stream of the allocation. Reports peak live bytes (what
//   the program holds), peak reserved bytes (what the pool holds) and their ratio. With
//   `own_stream_only`, each thread uses only its own stream.
// - short_lived_streams: each iteration creates a stream, allocates and frees 8 blocks on it and
//   destroys it; after `seen` streams were already churned through the same pool. The time per
//   stream should not depend on `seen`.
//
// Unlike the other benchmarks, this one makes its pool itself rather than through the
// configuration: the GPU script also compiles it against an earlier tree (its `base` stage), to
// compare engines in one run, and earlier trees' configurations do not take every setting used
// here (an empty initial pool).

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

namespace rmm::bench {
namespace {

struct peaks {
  std::atomic<std::size_t> live{0};
  std::atomic<std::size_t> peak_live{0};
  std::atomic<std::size_t> peak_reserved{0};

  static void raise(std::atomic<std::size_t>& peak, std::size_t value)
  {
    auto seen = peak.load(std::memory_order_relaxed);
    while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {}
  }
};

void stress_thread(rmm::mr::pool_memory_resource& pool,
                   std::vector<rmm::cuda_stream> const& shared,
                   bool own_stream_only,
                   unsigned seed,
                   int operations,
                   peaks& p)
{
  rmm::cuda_stream own;
  std::mt19937 rng{seed};
  std::uniform_int_distribution<std::size_t> size_of(256, std::size_t{4} << 20);
  std::uniform_int_distribution<int> which(0, 10);
  struct block {
    void* ptr;
    std::size_t size;
    rmm::cuda_stream_view stream;
  };
  std::vector<block> live;
  auto const pick_stream = [&]() -> rmm::cuda_stream_view {
    if (own_stream_only) { return own.view(); }
    auto const w = which(rng);
    if (w < 8) { return shared[static_cast<std::size_t>(w)].view(); }
    if (w == 8) { return rmm::cuda_stream_per_thread; }
    if (w == 9) { return rmm::cuda_stream_legacy; }
    return own.view();
  };
  auto const free_one = [&](std::size_t i) {
    pool.deallocate(live[i].stream, live[i].ptr, live[i].size);
    p.live.fetch_sub(live[i].size, std::memory_order_relaxed);
    live[i] = live.back();
    live.pop_back();
  };
  for (int op = 0; op < operations; ++op) {
    if (live.size() < 48 && (live.empty() || rng() % 100 < 55)) {
      auto const size   = size_of(rng);
      auto const stream = pick_stream();
      live.push_back({pool.allocate(stream, size), size, stream});
      peaks::raise(p.peak_live, p.live.fetch_add(size, std::memory_order_relaxed) + size);
      peaks::raise(p.peak_reserved, pool.pool_size());
    } else {
      free_one(rng() % live.size());
    }
  }
  while (!live.empty()) { free_one(live.size() - 1); }
}

void multi_stream_reservation(benchmark::State& state)
{
  bool const own_stream_only = state.range(0) != 0;
  constexpr int threads      = 16;
  constexpr int operations   = 4000;
  peaks p;
  double reserved_over_live = 0;
  for (auto _ : state) {
    rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
    std::vector<rmm::cuda_stream> shared(8);
    p.peak_live     = 0;
    p.peak_reserved = 0;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        RMM_CUDA_TRY(cudaSetDevice(0));
        stress_thread(pool, shared, own_stream_only, static_cast<unsigned>(t + 1), operations, p);
      });
    }
    for (auto& w : workers) { w.join(); }
    RMM_CUDA_TRY(cudaDeviceSynchronize());
    reserved_over_live = static_cast<double>(p.peak_reserved.load()) / static_cast<double>(p.peak_live.load());
  }
  state.counters["peak_live_MiB"]      = static_cast<double>(p.peak_live.load()) / (1 << 20);
  state.counters["peak_reserved_MiB"]  = static_cast<double>(p.peak_reserved.load()) / (1 << 20);
  state.counters["reserved_over_live"] = reserved_over_live;
  state.SetItemsProcessed(state.iterations() * threads * operations);
}
BENCHMARK(multi_stream_reservation)
  ->ArgName("own_stream_only")
  ->Arg(0)
  ->Arg(1)
  ->Iterations(3)
  ->Unit(benchmark::kMillisecond)
  ->UseRealTime();

void churn(rmm::mr::pool_memory_resource& pool, int streams)
{
  for (int s = 0; s < streams; ++s) {
    rmm::cuda_stream stream;
    std::array<void*, 8> blocks{};
    for (std::size_t i = 0; i < blocks.size(); ++i) { blocks[i] = pool.allocate(stream, (i + 1) * 4096); }
    for (std::size_t i = 0; i < blocks.size(); ++i) { pool.deallocate(stream, blocks[i], (i + 1) * 4096); }
  }
}

/// Arenas the pool holds, where its statistics say (-1 where they do not).
template <class Statistics>
double arenas_of(Statistics const& stats)
{
  if constexpr (requires { stats.stream_arenas; }) {
    return static_cast<double>(stats.stream_arenas);
  } else {
    return -1;
  }
}

void short_lived_streams(benchmark::State& state)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  churn(pool, static_cast<int>(state.range(0)));
  for (auto _ : state) { churn(pool, 1); }
  state.counters["stream_arenas"] = arenas_of(pool.statistics());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(short_lived_streams)->ArgName("seen")->Arg(0)->Arg(5000)->Arg(15000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace rmm::bench

BENCHMARK_MAIN();
