// SPDX-License-Identifier: Apache-2.0
// What a program pays per allocation with and without the preload shim. This binary knows nothing
// of rmm and links the static CUDA runtime, like most CUDA programs; scripts/run-gpu-benchmarks.sh
// runs it as is, under the shim, under the shim switched off, and under the shim with a log, and
// puts the times side by side.
//
// - malloc_free_pair/SIZE: cudaMalloc + cudaFree of SIZE bytes.
// - driver_pair/SIZE: cuMemAlloc + cuMemFree, the entry points the runtime hands out
//   (cudaGetDriverEntryPointByVersion): the pair without the runtime's own work around it.
// - malloc_async_pair/SIZE: cudaMallocAsync + cudaFreeAsync on one stream.
// - foreign_free: cudaMallocManaged + cudaFree: memory the shim never serves (it passes through).
// - null_free: cudaFree(nullptr), and unknown_free: cuMemFree of an address nobody allocated (the
//   driver refuses it at once): calls the shim passes through, cheap enough natively that the
//   shim's own share of a pass-through shows.
// - unknown_free_driver_own: the same call made straight to the driver's own cuMemFree_v2, past
//   any wrapper (through glibc's own dlsym, found with dlvsym): with --benchmark_enable_random_interleaving
//   the two run in alternation in one process, so their difference is the shim's share of a
//   foreign free without the spread between processes (natively it is zero).
// - malloc_free_pair_threads: the pair from 8 threads at once.
// - malloc_free_pair_beside_streams/N: the pair of 4 KiB while N idle non-blocking streams exist.

#include "../driver_entry_point.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <benchmark/benchmark.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t status, char const* what)
{
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

void malloc_free_pair(benchmark::State& state)
{
  auto const size = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* ptr = nullptr;
    check(cudaMalloc(&ptr, size), "cudaMalloc");
    check(cudaFree(ptr), "cudaFree");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(malloc_free_pair)->Arg(256)->Arg(4096)->Arg(1 << 20)->Arg(16 << 20);

/// The pair while the program keeps idle non-blocking streams, as PyTorch keeps a pool of 32:
/// under the shim every free then goes through an epoch, whose closing queries and fences each of them.
void malloc_free_pair_beside_streams(benchmark::State& state)
{
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(state.range(0)));
  for (auto& s : streams) { check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
  for (auto _ : state) {
    void* ptr = nullptr;
    check(cudaMalloc(&ptr, 4096), "cudaMalloc");
    check(cudaFree(ptr), "cudaFree");
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  for (auto s : streams) { check(cudaStreamDestroy(s), "cudaStreamDestroy"); }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(malloc_free_pair_beside_streams)->Arg(4)->Arg(32);

using rmm::bench::driver_entry_point;

void driver_pair(benchmark::State& state)
{
  using mem_alloc_fn          = CUresult (*)(CUdeviceptr*, std::size_t);
  using mem_free_fn           = CUresult (*)(CUdeviceptr);
  static auto const mem_alloc = driver_entry_point<mem_alloc_fn>("cuMemAlloc");
  static auto const mem_free  = driver_entry_point<mem_free_fn>("cuMemFree");
  auto const size             = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    CUdeviceptr ptr{};
    if (mem_alloc(&ptr, size) != CUDA_SUCCESS || mem_free(ptr) != CUDA_SUCCESS) {
      state.SkipWithError("cuMemAlloc or cuMemFree failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(driver_pair)->Arg(4096)->Arg(1 << 20);

void malloc_free_pair_threads(benchmark::State& state)
{
  for (auto _ : state) {
    void* ptr = nullptr;
    check(cudaMalloc(&ptr, 4096), "cudaMalloc");
    check(cudaFree(ptr), "cudaFree");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(malloc_free_pair_threads)->Threads(8)->UseRealTime();

void malloc_async_pair(benchmark::State& state)
{
  auto const size = static_cast<std::size_t>(state.range(0));
  cudaStream_t stream{};
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  for (auto _ : state) {
    void* ptr = nullptr;
    check(cudaMallocAsync(&ptr, size, stream), "cudaMallocAsync");
    check(cudaFreeAsync(ptr, stream), "cudaFreeAsync");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(malloc_async_pair)->Arg(4096)->Arg(1 << 20);

void foreign_free(benchmark::State& state)
{
  for (auto _ : state) {
    void* ptr = nullptr;
    check(cudaMallocManaged(&ptr, 4096), "cudaMallocManaged");
    check(cudaFree(ptr), "cudaFree");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(foreign_free);

void null_free(benchmark::State& state)
{
  for (auto _ : state) { check(cudaFree(nullptr), "cudaFree(nullptr)"); }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(null_free);

using mem_free_fn = CUresult (*)(CUdeviceptr);

/// Frees an address nobody allocated through `mem_free`, once per iteration: the driver refuses it.
void free_unknown_address(benchmark::State& state, mem_free_fn mem_free)
{
  CUdeviceptr const nobodys = 0x1000;  // below every allocation the driver hands out
  for (auto _ : state) {
    if (mem_free(nobodys) == CUDA_SUCCESS) {
      state.SkipWithError("cuMemFree accepted an address nobody allocated");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void unknown_free(benchmark::State& state)
{
  static auto const mem_free = driver_entry_point<mem_free_fn>("cuMemFree");
  free_unknown_address(state, mem_free);
}
BENCHMARK(unknown_free);

void unknown_free_driver_own(benchmark::State& state)
{
  // glibc's own dlsym (dlvsym is not wrapped), asked for the driver's own function.
  static auto const mem_free = []() -> mem_free_fn {
    using dlsym_fn = void* (*)(void*, char const*);
    void* driver   = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    for (char const* version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"}) {  // as the shim looks
      if (auto const glibc_dlsym = reinterpret_cast<dlsym_fn>(dlvsym(RTLD_DEFAULT, "dlsym", version));
          driver != nullptr && glibc_dlsym != nullptr) {
        return reinterpret_cast<mem_free_fn>(glibc_dlsym(driver, "cuMemFree_v2"));
      }
    }
    return nullptr;
  }();
  if (mem_free == nullptr) {
    state.SkipWithError("cannot find the driver's own cuMemFree_v2 through glibc's dlsym");
    return;
  }
  free_unknown_address(state, mem_free);
}
BENCHMARK(unknown_free_driver_own);

}  // namespace

int main(int argc, char** argv)
{
  check(cudaFree(nullptr), "CUDA initialisation");  // outside every timed region
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
