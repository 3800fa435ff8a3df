// SPDX-License-Identifier: Apache-2.0
// How allocation cost scales with the number of free holes, and with threads on their own streams.

#include "resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>

#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <vector>

namespace rmm::bench {
namespace {

// Holes sweep: 2H blocks of 64 KiB, every other one freed, leaves H holes that nothing merges.
// Each iteration allocates and frees a block larger than any hole, so a search that walks the
// holes (RMM's pool) pays for every one of them.
void holes(benchmark::State& state, rmm::mr::any_device_resource (*make)())
{
  auto const hole_count           = static_cast<std::size_t>(state.range(0));
  constexpr std::size_t hole_size = 64 << 10;
  auto mr                         = make();
  rmm::cuda_stream stream;
  std::vector<void*> blocks;
  blocks.reserve(2 * hole_count);
  for (std::size_t i = 0; i < 2 * hole_count; ++i) {
    blocks.push_back(mr.allocate(stream, hole_size, rmm::CUDA_ALLOCATION_ALIGNMENT));
  }
  for (std::size_t i = 0; i < blocks.size(); i += 2) {
    mr.deallocate(stream, blocks[i], hole_size, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  for (auto _ : state) {
    void* p = mr.allocate(stream, 2 * hole_size, rmm::CUDA_ALLOCATION_ALIGNMENT);
    benchmark::DoNotOptimize(p);
    mr.deallocate(stream, p, 2 * hole_size, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  for (std::size_t i = 1; i < blocks.size(); i += 2) {
    mr.deallocate(stream, blocks[i], hole_size, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  stream.synchronize();
  state.counters["holes"] = static_cast<double>(hole_count);
}

void hole_counts(benchmark::internal::Benchmark* b)
{
  for (long h = 16; h <= 65536; h *= 4) { b->Arg(h); }
}

BENCHMARK_CAPTURE(holes, pool, &make_pool)->Apply(hole_counts)->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(holes, cuda_async, &make_cuda_async)->Apply(hole_counts)->Unit(benchmark::kNanosecond);

// Thread sweep: each thread allocates and frees random sizes (256 B .. 1 MiB, up to 64 live) on
// its own stream. Throughput is items per second over all threads. One resource per run, made
// before the threads start.
std::shared_ptr<rmm::mr::any_device_resource> shared_resource;

template <rmm::mr::any_device_resource (*Make)()>
void make_shared_resource(benchmark::State const&)
{
  shared_resource = std::make_shared<rmm::mr::any_device_resource>(Make());
}
void drop_shared_resource(benchmark::State const&) { shared_resource.reset(); }

void threads(benchmark::State& state)
{
  rmm::cuda_stream stream;
  std::mt19937 rng(static_cast<unsigned>(state.thread_index()) + 1);
  std::uniform_int_distribution<std::size_t> size_of(256, 1 << 20);
  struct block {
    void* ptr;
    std::size_t size;
  };
  std::vector<block> live;
  live.reserve(64);
  auto mr = shared_resource;
  for (auto _ : state) {
    if (live.size() < 64 && (live.empty() || rng() % 2 == 0)) {
      auto const size = size_of(rng);
      live.push_back({mr->allocate(stream, size, rmm::CUDA_ALLOCATION_ALIGNMENT), size});
    } else {
      auto const i = rng() % live.size();
      mr->deallocate(stream, live[i].ptr, live[i].size, rmm::CUDA_ALLOCATION_ALIGNMENT);
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (auto const& b : live) { mr->deallocate(stream, b.ptr, b.size, rmm::CUDA_ALLOCATION_ALIGNMENT); }
  stream.synchronize();
  state.SetItemsProcessed(state.iterations());
}

#define RMM_THREAD_SWEEP(name, make)    \
  BENCHMARK(threads)                    \
    ->Name("threads/" name)             \
    ->Setup(make_shared_resource<make>) \
    ->Teardown(drop_shared_resource)    \
    ->ThreadRange(1, 16)                \
    ->UseRealTime()

RMM_THREAD_SWEEP("pool", make_pool);
RMM_THREAD_SWEEP("binning", make_binning);
RMM_THREAD_SWEEP("arena", make_arena);
RMM_THREAD_SWEEP("cuda_async", make_cuda_async);

}  // namespace
}  // namespace rmm::bench

BENCHMARK_MAIN();
