// SPDX-License-Identifier: Apache-2.0
// What skipping initialization buys: constructing (and destroying) N int32 elements as a
// thrust::device_vector (cudaMalloc + fill kernel + cudaFree: the baseline, timed in the same
// iterations) against rmm containers.
//
//   device_vector_baseline        thrust::device_vector<int32_t>(n)          cudaMalloc + zero fill
//   rmm_device_vector/<resource>  rmm::device_vector<int32_t>(n)             resource + zero fill
//   device_uvector/<resource>     rmm::device_uvector<int32_t>(n, stream)    resource, no fill
//
// Each iteration ends with the stream synchronized, so the time covers the work done. Every case
// but the baseline also times the baseline in the same iterations and reports the counter
// `speedup_vs_device_vector` (baseline time / own time).

#include <rmm/cuda_stream.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/device_vector.hpp>
#include <rmm/error.hpp>
#include <rmm/resource_ref.hpp>

#include "../suballocators/resources.hpp"

#include <benchmark/benchmark.h>
#include <thrust/device_vector.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace {

using element_t  = std::int32_t;
using clock_type = std::chrono::steady_clock;

double seconds_of(auto&& work)
{
  auto const start = clock_type::now();
  work();
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

void construct_device_vector(std::size_t n)
{
  thrust::device_vector<element_t> v(n);  // allocates with cudaMalloc, fills with a kernel, synchronizes
  benchmark::DoNotOptimize(thrust::raw_pointer_cast(v.data()));
}

rmm::mr::any_device_resource make_resource(std::string const& name, std::size_t largest)
{
  if (name == "cuda") { return rmm::bench::make_cuda(); }
  if (name == "cuda_async") { return rmm::bench::make_cuda_async(); }
  // pool: sized up front so the benchmark measures sub-allocation, not growth
  return rmm::bench::from_config("[[resource]]\ntype = \"pool\"\ninitial_size = " +
                                 std::to_string(2 * largest * sizeof(element_t)) + "\n[[resource]]\ntype = \"cuda\"\n");
}

constexpr std::int64_t smallest = std::int64_t{1} << 10;
constexpr std::int64_t largest  = std::int64_t{1} << 28;  // 1 GiB of int32
// Fixed, because each iteration also runs the (slower) baseline untimed: with Google Benchmark's
// automatic count, fast cases would spend seconds in the baseline.
constexpr benchmark::IterationCount timed_iterations = 200;

void device_vector_baseline(benchmark::State& state)
{
  auto const n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) { construct_device_vector(n); }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n * sizeof(element_t)));
}

// `construct` builds and destroys one container of n elements; the iteration ends synchronized.
void against_baseline(benchmark::State& state, std::function<void(std::size_t)> const& construct)
{
  auto const n = static_cast<std::size_t>(state.range(0));
  construct(n);  // warm-up: the first allocation from a resource may reserve memory
  construct_device_vector(n);
  double baseline = 0;
  double own      = 0;
  for (auto _ : state) {
    double const t = seconds_of([&] { construct(n); });
    own += t;
    state.SetIterationTime(t);
    state.PauseTiming();
    baseline += seconds_of([&] { construct_device_vector(n); });
    state.ResumeTiming();
  }
  state.counters["speedup_vs_device_vector"] = own > 0 ? baseline / own : 0.0;
  state.counters["device_vector_us"] = benchmark::Counter(1e6 * baseline / static_cast<double>(state.iterations()));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n * sizeof(element_t)));
}

void device_uvector(benchmark::State& state, std::string const& resource_name)
{
  auto mr = make_resource(resource_name, static_cast<std::size_t>(largest));
  rmm::cuda_stream stream;
  against_baseline(state, [&](std::size_t n) {
    {
      rmm::device_uvector<element_t> v(n, stream, mr);
      benchmark::DoNotOptimize(v.data());
    }
    stream.synchronize();
  });
}

void rmm_device_vector(benchmark::State& state, std::string const& resource_name)
{
  auto mr = make_resource(resource_name, static_cast<std::size_t>(largest));
  against_baseline(state, [&](std::size_t n) {
    rmm::device_vector<element_t> v(n, rmm::mr::thrust_allocator<element_t>(rmm::cuda_stream_default, mr));
    benchmark::DoNotOptimize(thrust::raw_pointer_cast(v.data()));
  });
}

void register_all()
{
  benchmark::RegisterBenchmark("device_vector_baseline", device_vector_baseline)
    ->RangeMultiplier(16)
    ->Range(smallest, largest)
    ->Unit(benchmark::kMicrosecond);
  for (std::string const resource : {"cuda", "cuda_async", "pool"}) {
    benchmark::RegisterBenchmark(("device_uvector/" + resource).c_str(),
                                 [resource](benchmark::State& s) { device_uvector(s, resource); })
      ->RangeMultiplier(16)
      ->Range(smallest, largest)
      ->UseManualTime()
      ->Iterations(timed_iterations)
      ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("rmm_device_vector/" + resource).c_str(),
                                 [resource](benchmark::State& s) { rmm_device_vector(s, resource); })
      ->RangeMultiplier(16)
      ->Range(smallest, largest)
      ->UseManualTime()
      ->Iterations(timed_iterations)
      ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv)
{
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
