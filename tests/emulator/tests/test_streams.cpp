// SPDX-License-Identifier: Apache-2.0
// Streams: asynchronous in-order execution, the delay knob, legacy default stream semantics,
// per-thread default streams, destruction with pending work.
#include "emu_test.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

// The per-thread-default-stream exports, as nvcc --default-stream per-thread code calls them.
extern "C" {
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t, cudaHostFn_t, void*);
cudaError_t cudaStreamQuery_ptsz(cudaStream_t);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t cudaMemsetAsync_ptsz(void*, int, size_t, cudaStream_t);
cudaError_t cudaMemcpyAsync_ptsz(void*, void const*, size_t, cudaMemcpyKind, cudaStream_t);
}

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

struct Recorder {
  std::mutex m;
  std::vector<int> seen;
  void add(int v)
  {
    std::lock_guard lock(m);
    seen.push_back(v);
  }
};

struct Step {
  Recorder* rec;
  int value;
  int sleep_ms;
};

void CUDART_CB run_step(void* p)
{
  auto* s = static_cast<Step*>(p);
  if (s->sleep_ms > 0) { emu::sleep_ms(s->sleep_ms); }
  s->rec->add(s->value);
}

void CUDART_CB sleep_100ms(void*) { emu::sleep_ms(100); }
void CUDART_CB sleep_300ms(void*) { emu::sleep_ms(300); }

void CUDART_CB set_flag(void* p) { static_cast<std::atomic<int>*>(p)->store(1); }

struct Observation {
  std::atomic<int>* flag;
  std::atomic<int> seen{-1};
};
void CUDART_CB observe(void* p)
{
  auto* o = static_cast<Observation*>(p);
  o->seen.store(o->flag->load());
}

TEST(EmulatorStreams, RunAsynchronouslyInOrder)
{
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  Recorder rec;
  std::vector<Step> steps;
  for (int i = 0; i < 20; ++i) { steps.push_back({&rec, i, i == 0 ? 300 : 0}); }
  auto const start = clock_type::now();
  for (auto& st : steps) { ASSERT_CUDA(cudaLaunchHostFunc(s, run_step, &st)); }
  EXPECT_LT(seconds_since(start), 0.25);  // enqueueing does not wait for the 300 ms step
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_CUDA(cudaStreamQuery(s));
  std::vector<int> expected(20);
  for (int i = 0; i < 20; ++i) { expected[static_cast<std::size_t>(i)] = i; }
  EXPECT_EQ(rec.seen, expected);
  EXPECT_CUDA(cudaStreamDestroy(s));
}

TEST(EmulatorStreams, DelayKnobSlowsEveryOperation)
{
  emu::Knob delay("RMM_EMU_STREAM_DELAY_US", "20000");
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  void* p = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 4096));
  auto const start = clock_type::now();
  for (int i = 0; i < 5; ++i) { ASSERT_CUDA(cudaMemsetAsync(p, i, 4096, s)); }
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_GE(seconds_since(start), 0.1);
  EXPECT_CUDA(cudaFree(p));
  EXPECT_CUDA(cudaStreamDestroy(s));
}

TEST(EmulatorStreams, LegacyStreamWaitsForBlockingStreams)
{
  cudaStream_t blocking = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&blocking));
  std::atomic<int> flag{0};
  ASSERT_CUDA(cudaLaunchHostFunc(blocking, sleep_100ms, nullptr));
  ASSERT_CUDA(cudaLaunchHostFunc(blocking, set_flag, &flag));
  Observation o{&flag};
  ASSERT_CUDA(cudaLaunchHostFunc(nullptr, observe, &o));  // legacy stream
  ASSERT_CUDA(cudaStreamSynchronize(nullptr));
  EXPECT_EQ(o.seen.load(), 1);
  EXPECT_CUDA(cudaStreamDestroy(blocking));
}

TEST(EmulatorStreams, BlockingStreamsWaitForLegacyWork)
{
  cudaStream_t blocking = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&blocking));
  std::atomic<int> flag{0};
  ASSERT_CUDA(cudaLaunchHostFunc(cudaStreamLegacy, sleep_100ms, nullptr));
  ASSERT_CUDA(cudaLaunchHostFunc(cudaStreamLegacy, set_flag, &flag));
  Observation o{&flag};
  ASSERT_CUDA(cudaLaunchHostFunc(blocking, observe, &o));
  ASSERT_CUDA(cudaStreamSynchronize(blocking));
  EXPECT_EQ(o.seen.load(), 1);
  EXPECT_CUDA(cudaStreamDestroy(blocking));
}

TEST(EmulatorStreams, NonBlockingStreamsAreExempt)
{
  cudaStream_t nb = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  unsigned flags = 0;
  ASSERT_CUDA(cudaStreamGetFlags(nb, &flags));
  EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamNonBlocking));
  std::atomic<int> flag{0};
  ASSERT_CUDA(cudaLaunchHostFunc(nb, sleep_300ms, nullptr));
  ASSERT_CUDA(cudaLaunchHostFunc(nb, set_flag, &flag));
  Observation o{&flag};
  ASSERT_CUDA(cudaLaunchHostFunc(nullptr, observe, &o));
  ASSERT_CUDA(cudaStreamSynchronize(nullptr));
  EXPECT_EQ(o.seen.load(), 0);  // the legacy stream did not wait for the non-blocking stream
  ASSERT_CUDA(cudaStreamSynchronize(nb));
  EXPECT_CUDA(cudaStreamDestroy(nb));
}

TEST(EmulatorStreams, PerThreadDefaultStreamIsPerThreadAndBlocking)
{
  // This thread's per-thread stream is busy; another thread's is not.
  ASSERT_CUDA(cudaLaunchHostFunc(cudaStreamPerThread, sleep_300ms, nullptr));
  std::thread([] {
    EXPECT_CUDA(cudaStreamQuery(cudaStreamPerThread));
    std::atomic<int> done{0};
    EXPECT_CUDA(cudaLaunchHostFunc_ptsz(nullptr, set_flag, &done));  // stream 0 in _ptsz = per-thread
    EXPECT_CUDA(cudaStreamSynchronize_ptsz(nullptr));
    EXPECT_EQ(done.load(), 1);
  }).join();
  EXPECT_EQ(cudaStreamQuery_ptsz(nullptr), cudaErrorNotReady);
  // ... and, being blocking, it holds up the legacy stream.
  std::atomic<int> flag{0};
  ASSERT_CUDA(cudaLaunchHostFunc(cudaStreamPerThread, set_flag, &flag));
  Observation o{&flag};
  ASSERT_CUDA(cudaLaunchHostFunc(nullptr, observe, &o));
  ASSERT_CUDA(cudaStreamSynchronize(nullptr));
  EXPECT_EQ(o.seen.load(), 1);
}

TEST(EmulatorStreams, PtszCopiesRunOnThePerThreadStream)
{
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 64));
  ASSERT_CUDA(cudaLaunchHostFunc(cudaStreamPerThread, sleep_100ms, nullptr));
  ASSERT_CUDA(cudaMemsetAsync_ptsz(d, 0x5a, 64, nullptr));
  unsigned char host[64]{};
  ASSERT_CUDA(cudaMemcpyAsync_ptsz(host, d, 64, cudaMemcpyDeviceToHost, nullptr));
  EXPECT_EQ(cudaStreamQuery(cudaStreamPerThread), cudaErrorNotReady);
  ASSERT_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  EXPECT_EQ(host[63], 0x5a);
  EXPECT_CUDA(cudaFree(d));
}

TEST(EmulatorStreams, DestroyReturnsAtOncePendingWorkCompletes)
{
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  std::atomic<int> flag{0};
  ASSERT_CUDA(cudaLaunchHostFunc(s, sleep_300ms, nullptr));
  ASSERT_CUDA(cudaLaunchHostFunc(s, set_flag, &flag));
  auto const start = clock_type::now();
  ASSERT_CUDA(cudaStreamDestroy(s));
  EXPECT_LT(seconds_since(start), 0.2);
  EXPECT_EQ(flag.load(), 0);
  ASSERT_CUDA(cudaDeviceSynchronize());  // still waits for the destroyed stream's work
  EXPECT_EQ(flag.load(), 1);
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
}

TEST(EmulatorStreams, Attributes)
{
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithPriority(&s, cudaStreamDefault, -100));
  int priority = 0;
  ASSERT_CUDA(cudaStreamGetPriority(s, &priority));
  EXPECT_EQ(priority, -5);  // clamped to the greatest priority
  int least    = 1;
  int greatest = 1;
  ASSERT_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT_EQ(least, 0);
  EXPECT_EQ(greatest, -5);
  int dev = -1;
  ASSERT_CUDA(cudaStreamGetDevice(s, &dev));
  EXPECT_EQ(dev, 0);
  unsigned long long id1 = 0;
  unsigned long long id2 = 0;
  ASSERT_CUDA(cudaStreamGetId(s, &id1));
  ASSERT_CUDA(cudaStreamGetId(cudaStreamPerThread, &id2));
  EXPECT_NE(id1, id2);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  ASSERT_CUDA(cudaStreamIsCapturing(s, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  status = cudaStreamCaptureStatusActive;
  ASSERT_CUDA(cudaStreamGetCaptureInfo(s, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  EXPECT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUDA(cudaSetDevice(1));
  ASSERT_CUDA(cudaStreamCreate(&s));
  ASSERT_CUDA(cudaStreamGetDevice(s, &dev));
  EXPECT_EQ(dev, 1);
  EXPECT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUDA(cudaSetDevice(0));
  EXPECT_EQ(cudaStreamCreateWithFlags(&s, 0x10), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamDestroy(nullptr), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
}

struct CallbackSeen {
  cudaStream_t stream = nullptr;
  cudaError_t status  = cudaErrorUnknown;
  std::atomic<int> calls{0};
};
void CUDART_CB callback(cudaStream_t s, cudaError_t status, void* p)
{
  auto* seen   = static_cast<CallbackSeen*>(p);
  seen->stream = s;
  seen->status = status;
  seen->calls.fetch_add(1);
}

TEST(EmulatorStreams, StreamCallbacks)
{
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  CallbackSeen seen;
  ASSERT_CUDA(cudaStreamAddCallback(s, callback, &seen, 0));
  EXPECT_EQ(cudaStreamAddCallback(s, callback, &seen, 1), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(seen.calls.load(), 1);
  EXPECT_EQ(seen.stream, s);
  EXPECT_EQ(seen.status, cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(s));
  (void)cudaGetLastError();
}

struct Blocked {
  cudaStream_t stream;
  std::atomic<int> result{-1};
};
void CUDART_CB try_to_block(void* p)
{
  auto* b = static_cast<Blocked*>(p);
  b->result.store(cudaStreamSynchronize(b->stream));
}

TEST(EmulatorStreams, HostFunctionsMayNotBlockOnStreams)
{
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  Blocked b{s};
  ASSERT_CUDA(cudaLaunchHostFunc(s, try_to_block, &b));
  ASSERT_CUDA(cudaStreamSynchronize(s));  // would deadlock if the callback really waited
  EXPECT_EQ(b.result.load(), cudaErrorNotPermitted);
  EXPECT_CUDA(cudaStreamDestroy(s));
}

}  // namespace
