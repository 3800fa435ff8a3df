// SPDX-License-Identifier: Apache-2.0
// Allocation never serializes independent streams (RMM's multi_stream_allocations pattern).
//
// Each run launches `kernels` (4) compute-bound kernels of ~1M clock cycles, each on a stream from
// a pool of `streams` (1, 2, 4) streams and each writing to its own device_uvector allocated and
// freed on that stream from the resource under test, then synchronizes the device. With 1 stream
// the kernels run one after another; with 4 they can overlap, so the run takes ~1/4 as long
// unless allocating or freeing synchronizes the streams (cudaFree does: `cuda`).
//
// Every case times the 1-stream run of the same resource in the same iterations and reports the
// counter `speedup_vs_1_stream` (1-stream time / own time). Arguments: streams, prewarm (0/1: each
// stream allocated once before timing, so the resource has memory ready for it).

#include <rmm/cuda_stream_pool.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/resource_ref.hpp>

#include "../suballocators/resources.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace {

constexpr std::size_t kernels         = 4;
constexpr long long cycles_per_kernel = 1'000'000;
// Fixed, because each iteration also runs the 1-stream baseline (~2 ms): 200 keep a case ~0.5 s.
constexpr benchmark::IterationCount timed_iterations = 200;

__global__ void compute_bound_kernel(std::int64_t* out)
{
  auto const begin = clock64();
  auto now         = begin;
  while (now - begin < cycles_per_kernel) { now = clock64(); }
  *out = now;
}

/// The resource under test, from its configuration: pools start empty, the arena holds 1 GiB.
rmm::mr::any_device_resource make_resource(std::string const& name)
{
  constexpr char const* pool = "[[resource]]\ntype = \"pool\"\ninitial_size = 0\n[[resource]]\ntype = \"cuda\"\n";
  if (name == "cuda") { return rmm::bench::make_cuda(); }
  if (name == "cuda_async") { return rmm::bench::make_cuda_async(); }
  if (name == "arena") {
    return rmm::bench::from_config(
      "[[resource]]\ntype = \"arena\"\narena_size = \"1GiB\"\n[[resource]]\ntype = \"cuda\"\n");
  }
  if (name == "binning") { return rmm::bench::from_config(std::string{"[[resource]]\ntype = \"binning\"\n"} + pool); }
  return rmm::bench::from_config(pool);
}

void run(rmm::cuda_stream_pool const& streams, rmm::mr::any_device_resource const& mr)
{
  for (std::size_t i = 0; i < kernels; ++i) {
    auto const stream = streams.get_stream(i);
    rmm::device_uvector<std::int64_t> out(1, stream, mr);
    compute_bound_kernel<<<1, 1, 0, stream.value()>>>(out.data());
    RMM_CUDA_TRY(cudaGetLastError());
  }  // each vector is freed on its stream right after its kernel was queued
  RMM_CUDA_TRY(cudaDeviceSynchronize());
}

void prewarm(rmm::cuda_stream_pool const& streams, rmm::mr::any_device_resource const& mr)
{
  for (std::size_t i = 0; i < streams.get_pool_size(); ++i) {
    rmm::device_uvector<std::int64_t> out(1, streams.get_stream(i), mr);
  }
  RMM_CUDA_TRY(cudaDeviceSynchronize());
}

double seconds_of(auto&& work)
{
  auto const start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void multi_stream_allocations(benchmark::State& state, std::string const& resource_name)
{
  auto const num_streams = static_cast<std::size_t>(state.range(0));
  bool const do_prewarm  = state.range(1) != 0;
  auto mr                = make_resource(resource_name);
  rmm::cuda_stream_pool streams{num_streams};
  rmm::cuda_stream_pool one_stream{1};
  if (do_prewarm) {
    prewarm(streams, mr);
    prewarm(one_stream, mr);
  }
  run(one_stream, mr);  // loads the kernel, so no iteration pays for it

  double own      = 0;
  double baseline = 0;
  for (auto _ : state) {
    double const t = seconds_of([&] { run(streams, mr); });
    own += t;
    state.SetIterationTime(t);
    baseline += seconds_of([&] { run(one_stream, mr); });
  }
  state.counters["speedup_vs_1_stream"] = own > 0 ? baseline / own : 0.0;
  state.counters["one_stream_us"]       = 1e6 * baseline / static_cast<double>(state.iterations());
}

void register_all()
{
  for (std::string const resource : {"pool", "cuda_async", "arena", "binning", "cuda"}) {
    benchmark::RegisterBenchmark(("multi_stream_allocations/" + resource).c_str(),
                                 [resource](benchmark::State& s) { multi_stream_allocations(s, resource); })
      ->ArgNames({"streams", "prewarm"})
      ->ArgsProduct({{1, 2, 4}, {0, 1}})
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
