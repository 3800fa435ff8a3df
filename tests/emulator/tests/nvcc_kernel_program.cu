// SPDX-License-Identifier: Apache-2.0
// Built by nvcc (-cudart shared) for the emulator tests: its fat binary registers at start-up like
// any CUDA program's, memory calls work, and the kernel launches fail with cudaErrorNotSupported.
#include <cstdio>

__global__ void fill(int* p, int v) { p[threadIdx.x] = v; }
__device__ int device_variable;
__managed__ int managed_variable;

int main()
{
  int* d = nullptr;
  std::printf("cudaMalloc %s\n", cudaGetErrorName(cudaMalloc(&d, 256)));
  fill<<<1, 64>>>(d, 7);
  std::printf("launch %s\n", cudaGetErrorName(cudaGetLastError()));
  fill<<<1, 64>>>(d, 8);
  std::printf("launch %s\n", cudaGetErrorName(cudaGetLastError()));
  std::printf("cudaFree %s\n", cudaGetErrorName(cudaFree(d)));
  return 0;
}
