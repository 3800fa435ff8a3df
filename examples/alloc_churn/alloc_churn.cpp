// SPDX-License-Identifier: Apache-2.0
// alloc_churn: an ordinary CUDA program that knows nothing of rmm. Like a framework with its cache
// off, every step allocates the step's buffers with cudaMalloc, fills and combines them, and frees
// them with cudaFree. It prints the time per step and a checksum, so runs with and without the
// preload shim can be compared. With no usable GPU it says so and exits with status 2.
//
// usage: alloc_churn [steps]

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

void check(cudaError_t status, char const* what)
{
  if (status != cudaSuccess) {
    std::fprintf(stderr, "alloc_churn: %s failed: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv)
{
  int const steps = argc > 1 ? std::atoi(argv[1]) : 50;
  int devices     = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr,
                 "alloc_churn: no usable CUDA device (without a GPU, the alloc_churn_shared build runs on rmm's CPU "
                 "emulator of CUDA: put build/emulator/lib first on LD_LIBRARY_PATH)\n");
    return 2;
  }
  // The same buffer sizes every run: 64 buffers of 4 KiB to 16 MiB per step.
  std::mt19937 rng{42};
  std::vector<std::size_t> sizes(64);
  for (auto& size : sizes) { size = std::size_t{4096} << (rng() % 13); }
  cudaStream_t stream{};
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  std::uint64_t checksum = 0;
  std::vector<void*> buffers(sizes.size());
  auto const start = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      check(cudaMalloc(&buffers[i], sizes[i]), "cudaMalloc");
      check(cudaMemsetAsync(buffers[i], static_cast<int>((step + i) & 0xFF), sizes[i], stream), "cudaMemsetAsync");
    }
    for (std::size_t i = 1; i < sizes.size(); ++i) {  // combine neighbours
      auto const n = std::min(sizes[i], sizes[i - 1]);
      check(cudaMemcpyAsync(buffers[i], buffers[i - 1], n, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    }
    unsigned char last = 0;
    check(cudaMemcpyAsync(&last, buffers.back(), 1, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    checksum = checksum * 31 + last;
    for (void* buffer : buffers) { check(cudaFree(buffer), "cudaFree"); }
  }
  auto const elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("alloc_churn: %d steps of %zu cudaMalloc/cudaFree pairs, %.3f ms per step, checksum %llu\n", steps,
              sizes.size(), elapsed / steps, static_cast<unsigned long long>(checksum));
  return 0;
}
