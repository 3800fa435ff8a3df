// SPDX-License-Identifier: Apache-2.0
// The CUDA calls the sub-allocators make, for sizing how often they may make them: an event record
// (every 32 frees per arena), a stream wait (each hand-over) and a stream's id (every operation on
// a user stream), the last also as the engine makes it, through the driver; and the driver's
// current-context query, which the preload shim makes on every allocation and free.

#include "../driver_entry_point.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>

#include <benchmark/benchmark.h>

#include <cuda.h>

namespace {

void event_record(benchmark::State& state)
{
  rmm::cuda_stream stream;
  cudaEvent_t event{};
  RMM_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  for (auto _ : state) { RMM_CUDA_TRY(cudaEventRecord(event, stream.value())); }
  stream.synchronize();
  RMM_CUDA_TRY(cudaEventDestroy(event));
}

void stream_wait_event(benchmark::State& state)
{
  rmm::cuda_stream producer;
  rmm::cuda_stream consumer;
  cudaEvent_t event{};
  RMM_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  RMM_CUDA_TRY(cudaEventRecord(event, producer.value()));
  for (auto _ : state) { RMM_CUDA_TRY(cudaStreamWaitEvent(consumer.value(), event, 0)); }
  consumer.synchronize();
  RMM_CUDA_TRY(cudaEventDestroy(event));
}

void stream_get_id(benchmark::State& state)
{
  rmm::cuda_stream stream;
  unsigned long long id{};
  for (auto _ : state) {
    RMM_CUDA_TRY(cudaStreamGetId(stream.value(), &id));
    benchmark::DoNotOptimize(id);
  }
}

using rmm::bench::driver_entry_point;

void driver_stream_get_id(benchmark::State& state)
{
  auto const get_id = driver_entry_point<CUresult (*)(CUstream, unsigned long long*)>("cuStreamGetId");
  rmm::cuda_stream stream;
  unsigned long long id{};
  for (auto _ : state) {
    if (get_id(stream.value(), &id) != CUDA_SUCCESS) { state.SkipWithError("cuStreamGetId failed"); }
    benchmark::DoNotOptimize(id);
  }
}

void driver_ctx_get_current(benchmark::State& state)
{
  auto const get_current = driver_entry_point<CUresult (*)(CUcontext*)>("cuCtxGetCurrent");
  RMM_CUDA_TRY(cudaFree(nullptr));  // the runtime makes its context current
  CUcontext context{};
  for (auto _ : state) {
    if (get_current(&context) != CUDA_SUCCESS) { state.SkipWithError("cuCtxGetCurrent failed"); }
    benchmark::DoNotOptimize(context);
  }
}

BENCHMARK(event_record)->Unit(benchmark::kNanosecond);
BENCHMARK(driver_stream_get_id)->Unit(benchmark::kNanosecond);
BENCHMARK(driver_ctx_get_current)->Unit(benchmark::kNanosecond);
BENCHMARK(stream_get_id)->Unit(benchmark::kNanosecond);
BENCHMARK(stream_wait_event)->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
