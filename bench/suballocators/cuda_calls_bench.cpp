// The CUDA calls the sub-allocators make, for sizing how often they may make them: an event record
// (every 32 frees per arena), a stream wait (each hand-over) and a stream's id (every operation on
// a user stream).

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>

#include <benchmark/benchmark.h>

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

BENCHMARK(event_record)->Unit(benchmark::kNanosecond);
BENCHMARK(stream_get_id)->Unit(benchmark::kNanosecond);
BENCHMARK(stream_wait_event)->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
