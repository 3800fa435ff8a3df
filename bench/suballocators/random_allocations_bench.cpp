// SPDX-License-Identifier: Apache-2.0
// RMM's random_allocations workload: sizes uniform from 1 byte to a maximum, allocate with
// probability 0.73 while something is live (always when nothing is), at most 16,000 MiB live,
// N allocations in all, then free what is left. The operation sequence is generated once, outside
// the timed region. cuda and cuda_async are measured in the same run as the baselines.

#include "resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

namespace rmm::bench {
namespace {

struct operation {
  bool allocate;
  std::size_t size;   // allocation size, or
  std::size_t index;  // which live allocation to free (index into the live list at that moment)
};

std::vector<operation> make_sequence(std::size_t allocations, std::size_t max_size)
{
  constexpr std::size_t max_usage = std::size_t{16000} << 20;
  std::default_random_engine rng{};
  std::uniform_int_distribution<std::size_t> size_of(1, max_size);
  std::uniform_int_distribution<int> percent(0, 99);
  std::vector<operation> ops;
  std::vector<std::size_t> live;  // sizes
  std::size_t live_bytes = 0;
  std::size_t allocated  = 0;
  while (allocated < allocations || !live.empty()) {
    auto const size = size_of(rng);
    bool const allocate =
      allocated < allocations && (live.empty() || (percent(rng) < 73 && live_bytes + size < max_usage));
    if (allocate) {
      ops.push_back({true, size, 0});
      live.push_back(size);
      live_bytes += size;
      ++allocated;
    } else {
      auto const index = std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng);
      ops.push_back({false, 0, index});
      live_bytes -= live[index];
      live[index] = live.back();
      live.pop_back();
    }
  }
  return ops;
}

void run_sequence(std::vector<operation> const& ops, rmm::mr::any_device_resource& mr, rmm::cuda_stream_view stream)
{
  struct block {
    void* ptr;
    std::size_t size;
  };
  std::vector<block> live;
  live.reserve(ops.size());
  for (auto const& op : ops) {
    if (op.allocate) {
      live.push_back({mr.allocate(stream, op.size, rmm::CUDA_ALLOCATION_ALIGNMENT), op.size});
    } else {
      auto const b = live[op.index];
      mr.deallocate(stream, b.ptr, b.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
      live[op.index] = live.back();
      live.pop_back();
    }
  }
}

void run_random_allocations(benchmark::State& state, rmm::mr::any_device_resource (*make)(), bool default_stream)
{
  auto const allocations = static_cast<std::size_t>(state.range(0));
  auto const max_size    = static_cast<std::size_t>(state.range(1)) << 20;
  auto const ops         = make_sequence(allocations, max_size);
  auto mr                = make();
  rmm::cuda_stream own_stream;
  auto const stream = default_stream ? rmm::cuda_stream_view{} : own_stream.view();
  run_sequence(ops, mr, stream);  // warm-up: pools reach their steady size
  stream.synchronize();
  for (auto _ : state) {
    run_sequence(ops, mr, stream);
    stream.synchronize();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ops.size()));
  state.counters["ns_per_op"] =
    benchmark::Counter(static_cast<double>(state.iterations() * ops.size()),
                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

void random_allocations(benchmark::State& state, rmm::mr::any_device_resource (*make)())
{
  run_random_allocations(state, make, false);
}

/// The same on the legacy default stream, whose identity the engine asks the driver once per thread
/// (a user stream's, on every call): the difference is the price of that question.
void random_allocations_default_stream(benchmark::State& state, rmm::mr::any_device_resource (*make)())
{
  run_random_allocations(state, make, true);
}

void full_grid(benchmark::internal::Benchmark* b)
{
  b->Args({1000, 1})->Args({10000, 1})->Args({100000, 1})->Args({1000, 64})->Args({10000, 64})->Args({100000, 64});
}

// cudaMalloc/cudaFree take ~60 us a pair: RMM also leaves out its largest runs.
void cuda_grid(benchmark::internal::Benchmark* b) { b->Args({1000, 1})->Args({10000, 1})->Args({1000, 64}); }

BENCHMARK_CAPTURE(random_allocations, cuda, &make_cuda)->Apply(cuda_grid)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(random_allocations, cuda_async, &make_cuda_async)
  ->Apply(full_grid)
  ->Unit(benchmark::kMillisecond)
  ->UseRealTime();
BENCHMARK_CAPTURE(random_allocations, pool, &make_pool)->Apply(full_grid)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(random_allocations_default_stream, pool, &make_pool)
  ->Apply(full_grid)
  ->Unit(benchmark::kMillisecond)
  ->UseRealTime();
BENCHMARK_CAPTURE(random_allocations, binning, &make_binning)
  ->Apply(full_grid)
  ->Unit(benchmark::kMillisecond)
  ->UseRealTime();
BENCHMARK_CAPTURE(random_allocations, arena, &make_arena)
  ->Apply(full_grid)
  ->Unit(benchmark::kMillisecond)
  ->UseRealTime();

}  // namespace
}  // namespace rmm::bench

BENCHMARK_MAIN();
