// SPDX-License-Identifier: Apache-2.0
// What the pause's gate costs a served call: entering and leaving it (pause_gate.hpp), against the
// atomic way to be seen, one relaxed increment of a counter of the thread's own (a locked
// instruction on x86). Each thread has a seat of its own, so the cost should not grow with threads.

#include "stacks/pause_gate.hpp"

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>

namespace {

rmm::shim::pause_gate gate;

void BM_gate_pass(benchmark::State& state)
{
  for (auto _ : state) {
    auto const pass = gate.enter();
    benchmark::DoNotOptimize(pass.inside());
  }
}
BENCHMARK(BM_gate_pass)->Threads(1)->Threads(2)->Threads(8);

struct alignas(64) own_counter {
  std::atomic<std::uint64_t> value{0};
};
thread_local own_counter counter;

void BM_relaxed_own_counter(benchmark::State& state)
{
  for (auto _ : state) {
    counter.value.fetch_add(1, std::memory_order_relaxed);
    benchmark::DoNotOptimize(counter.value.load(std::memory_order_relaxed));
  }
}
BENCHMARK(BM_relaxed_own_counter)->Threads(1)->Threads(2)->Threads(8);

}  // namespace

BENCHMARK_MAIN();
