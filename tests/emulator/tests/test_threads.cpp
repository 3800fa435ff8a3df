// SPDX-License-Identifier: Apache-2.0
// Many threads at once: allocation, copies and stream work must stay consistent.
#include "emu_test.hpp"

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace {

TEST(EmulatorThreads, ConcurrentAllocateCopyFree)
{
  auto const& ctl             = emu::control();
  long long const live_before = ctl.live_allocations(-1, RMM_EMU_KIND_ALL);
  constexpr int kThreads      = 16;
  constexpr int kIterations   = 300;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &mismatches] {
      std::mt19937 rng(static_cast<unsigned>(t));
      EXPECT_CUDA(cudaSetDevice(t % 2));
      cudaStream_t s = nullptr;
      EXPECT_CUDA(cudaStreamCreate(&s));
      std::vector<unsigned char> host(70000);
      for (int i = 0; i < kIterations; ++i) {
        std::size_t const size = 1 + rng() % host.size();
        auto const fill        = static_cast<unsigned char>(rng());
        void* p                = nullptr;
        switch (rng() % 4) {
          case 0: {
            EXPECT_CUDA(cudaMalloc(&p, size));
            EXPECT_CUDA(cudaMemset(p, fill, size));
            EXPECT_CUDA(cudaMemcpy(host.data(), p, size, cudaMemcpyDeviceToHost));
            EXPECT_CUDA(cudaFree(p));
            break;
          }
          case 1: {
            EXPECT_CUDA(cudaMallocAsync(&p, size, s));
            EXPECT_CUDA(cudaMemsetAsync(p, fill, size, s));
            EXPECT_CUDA(cudaMemcpyAsync(host.data(), p, size, cudaMemcpyDeviceToHost, s));
            EXPECT_CUDA(cudaFreeAsync(p, s));
            EXPECT_CUDA(cudaStreamSynchronize(s));
            break;
          }
          case 2: {
            EXPECT_CUDA(cudaMallocAsync(&p, size, cudaStreamPerThread));
            EXPECT_CUDA(cudaMemsetAsync(p, fill, size, cudaStreamPerThread));
            EXPECT_CUDA(cudaMemcpyAsync(host.data(), p, size, cudaMemcpyDeviceToHost, cudaStreamPerThread));
            EXPECT_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
            EXPECT_CUDA(cudaFree(p));
            break;
          }
          default: {
            EXPECT_CUDA(cudaMallocHost(&p, size));
            std::memset(p, fill, size);
            void* d = nullptr;
            EXPECT_CUDA(cudaMalloc(&d, size));
            EXPECT_CUDA(cudaMemcpyAsync(d, p, size, cudaMemcpyHostToDevice, s));
            EXPECT_CUDA(cudaMemcpyAsync(host.data(), d, size, cudaMemcpyDeviceToHost, s));
            EXPECT_CUDA(cudaStreamSynchronize(s));
            EXPECT_CUDA(cudaFree(d));
            EXPECT_CUDA(cudaFreeHost(p));
            break;
          }
        }
        if (host[0] != fill || host[size - 1] != fill) { mismatches.fetch_add(1); }
      }
      EXPECT_CUDA(cudaStreamDestroy(s));
    });
  }
  for (auto& th : threads) { th.join(); }
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(ctl.live_allocations(-1, RMM_EMU_KIND_ALL), live_before);
}

TEST(EmulatorThreads, ConcurrentStreamsAndEvents)
{
  constexpr int kThreads = 8;
  std::atomic<int> counter{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&counter] {
      for (int i = 0; i < 50; ++i) {
        cudaStream_t a = nullptr;
        cudaStream_t b = nullptr;
        cudaEvent_t e  = nullptr;
        EXPECT_CUDA(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
        EXPECT_CUDA(cudaStreamCreate(&b));
        EXPECT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        EXPECT_CUDA(cudaLaunchHostFunc(
          a, [](void* c) { static_cast<std::atomic<int>*>(c)->fetch_add(1); }, &counter));
        EXPECT_CUDA(cudaEventRecord(e, a));
        EXPECT_CUDA(cudaStreamWaitEvent(b, e, 0));
        EXPECT_CUDA(cudaLaunchHostFunc(
          b, [](void* c) { static_cast<std::atomic<int>*>(c)->fetch_add(1); }, &counter));
        EXPECT_CUDA(cudaEventDestroy(e));
        EXPECT_CUDA(cudaStreamDestroy(a));
        EXPECT_CUDA(cudaStreamDestroy(b));
      }
    });
  }
  for (auto& th : threads) { th.join(); }
  EXPECT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(counter.load(), kThreads * 50 * 2);
}

}  // namespace
