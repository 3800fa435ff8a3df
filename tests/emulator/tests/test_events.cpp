// SPDX-License-Identifier: Apache-2.0
// Events: completion at their stream position, cross-stream and cross-device waits, timing.
#include "emu_test.hpp"

#include <atomic>

namespace {

struct Shared {
  std::atomic<int> value{0};
  std::atomic<int> seen{-1};
};

void CUDART_CB slow_write(void* p)
{
  emu::sleep_ms(150);
  static_cast<Shared*>(p)->value.store(42);
}

void CUDART_CB read_value(void* p)
{
  auto* s = static_cast<Shared*>(p);
  s->seen.store(s->value.load());
}

void CUDART_CB sleep_100ms(void*) { emu::sleep_ms(100); }

TEST(EmulatorEvents, NeverRecordedEventsAreComplete)
{
  cudaEvent_t e = nullptr;
  ASSERT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  EXPECT_CUDA(cudaEventQuery(e));
  EXPECT_CUDA(cudaEventSynchronize(e));
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  EXPECT_CUDA(cudaStreamWaitEvent(s, e, 0));
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, e, e), cudaErrorInvalidResourceHandle);
  EXPECT_CUDA(cudaEventDestroy(e));
  EXPECT_CUDA(cudaStreamDestroy(s));
  (void)cudaGetLastError();
}

TEST(EmulatorEvents, WaitingStreamObservesWorkBeforeTheEvent)
{
  cudaStream_t a = nullptr;
  cudaStream_t b = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  cudaEvent_t e = nullptr;
  ASSERT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  Shared shared;
  ASSERT_CUDA(cudaLaunchHostFunc(a, slow_write, &shared));
  ASSERT_CUDA(cudaEventRecord(e, a));
  EXPECT_EQ(cudaEventQuery(e), cudaErrorNotReady);
  EXPECT_CUDA(cudaGetLastError());  // "not ready" is not an error
  ASSERT_CUDA(cudaStreamWaitEvent(b, e, 0));
  ASSERT_CUDA(cudaLaunchHostFunc(b, read_value, &shared));
  ASSERT_CUDA(cudaStreamSynchronize(b));
  EXPECT_EQ(shared.seen.load(), 42);
  EXPECT_CUDA(cudaEventQuery(e));
  // Without the wait, b runs ahead of a.
  Shared unordered;
  ASSERT_CUDA(cudaLaunchHostFunc(a, slow_write, &unordered));
  ASSERT_CUDA(cudaLaunchHostFunc(b, read_value, &unordered));
  ASSERT_CUDA(cudaStreamSynchronize(b));
  EXPECT_EQ(unordered.seen.load(), 0);
  ASSERT_CUDA(cudaStreamSynchronize(a));
  EXPECT_CUDA(cudaEventDestroy(e));
  EXPECT_CUDA(cudaStreamDestroy(a));
  EXPECT_CUDA(cudaStreamDestroy(b));
}

TEST(EmulatorEvents, WaitsWorkAcrossDevices)
{
  ASSERT_CUDA(cudaSetDevice(0));
  cudaStream_t a = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&a));
  cudaEvent_t e = nullptr;
  ASSERT_CUDA(cudaEventCreate(&e));
  ASSERT_CUDA(cudaSetDevice(1));
  cudaStream_t b = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&b));
  Shared shared;
  ASSERT_CUDA(cudaLaunchHostFunc(a, slow_write, &shared));
  ASSERT_CUDA(cudaEventRecord(e, a));
  ASSERT_CUDA(cudaStreamWaitEvent(b, e, 0));
  ASSERT_CUDA(cudaLaunchHostFunc(b, read_value, &shared));
  ASSERT_CUDA(cudaStreamSynchronize(b));
  EXPECT_EQ(shared.seen.load(), 42);
  // An event records only into a stream of its own device.
  EXPECT_EQ(cudaEventRecord(e, b), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
  EXPECT_CUDA(cudaStreamDestroy(b));
  ASSERT_CUDA(cudaSetDevice(0));
  EXPECT_CUDA(cudaStreamDestroy(a));
  EXPECT_CUDA(cudaEventDestroy(e));
}

TEST(EmulatorEvents, CopiesOrderedThroughEvents)
{
  cudaStream_t a = nullptr;
  cudaStream_t b = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  cudaEvent_t e = nullptr;
  ASSERT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 256));
  ASSERT_CUDA(cudaLaunchHostFunc(a, sleep_100ms, nullptr));
  ASSERT_CUDA(cudaMemsetAsync(d, 7, 256, a));
  ASSERT_CUDA(cudaEventRecord(e, a));
  ASSERT_CUDA(cudaStreamWaitEvent(b, e, 0));
  unsigned char host[256]{};
  ASSERT_CUDA(cudaMemcpyAsync(host, d, 256, cudaMemcpyDeviceToHost, b));
  ASSERT_CUDA(cudaStreamSynchronize(b));
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[255], 7);
  EXPECT_CUDA(cudaFree(d));
  EXPECT_CUDA(cudaEventDestroy(e));
  EXPECT_CUDA(cudaStreamDestroy(a));
  EXPECT_CUDA(cudaStreamDestroy(b));
}

TEST(EmulatorEvents, ElapsedTime)
{
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  cudaEvent_t start = nullptr;
  cudaEvent_t stop  = nullptr;
  ASSERT_CUDA(cudaEventCreate(&start));
  ASSERT_CUDA(cudaEventCreate(&stop));
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaErrorInvalidResourceHandle);  // never recorded
  ASSERT_CUDA(cudaEventRecord(start, s));
  ASSERT_CUDA(cudaLaunchHostFunc(s, sleep_100ms, nullptr));
  ASSERT_CUDA(cudaEventRecord(stop, s));
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaErrorNotReady);
  ASSERT_CUDA(cudaEventSynchronize(stop));
  ASSERT_CUDA(cudaEventElapsedTime(&ms, start, stop));
  EXPECT_GE(ms, 95.0f);
  EXPECT_LT(ms, 5000.0f);
  EXPECT_CUDA(cudaEventDestroy(start));
  EXPECT_CUDA(cudaEventDestroy(stop));
  EXPECT_CUDA(cudaStreamDestroy(s));
  EXPECT_EQ(cudaEventCreateWithFlags(&start, cudaEventInterprocess), cudaErrorInvalidValue);  // needs DisableTiming
  (void)cudaGetLastError();
}

TEST(EmulatorEvents, RecordWithFlagsAndReRecord)
{
  cudaEvent_t e = nullptr;
  ASSERT_CUDA(cudaEventCreateWithFlags(&e, cudaEventBlockingSync | cudaEventDisableTiming));
  ASSERT_CUDA(cudaEventRecordWithFlags(e, nullptr, cudaEventRecordDefault));
  ASSERT_CUDA(cudaEventSynchronize(e));
  ASSERT_CUDA(cudaLaunchHostFunc(nullptr, sleep_100ms, nullptr));
  ASSERT_CUDA(cudaEventRecord(e, nullptr));  // the newest record is what counts
  EXPECT_EQ(cudaEventQuery(e), cudaErrorNotReady);
  ASSERT_CUDA(cudaEventSynchronize(e));
  EXPECT_CUDA(cudaEventQuery(e));
  EXPECT_EQ(cudaEventRecordWithFlags(e, nullptr, 0x8), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaEventDestroy(e));
  EXPECT_EQ(cudaEventDestroy(e), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
}

}  // namespace
