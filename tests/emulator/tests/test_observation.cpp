// SPDX-License-Identifier: Apache-2.0
// The controls that let tests of stream-ordered code decide from state instead of timing: whether a
// stream waits on another stream's work, how many host threads wait for stream work, pausing a
// thread inside cuEventRecord, and recycled stream handles.
#include "emu_test.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace {

// Holds a stream at a host function until open() (or destruction).
class Gate {
 public:
  explicit Gate(cudaStream_t s) { EXPECT_CUDA(cudaLaunchHostFunc(s, &Gate::hold, this)); }
  ~Gate()
  {
    open();
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return done_; });  // the host function no longer touches *this
  }
  Gate(Gate const&)            = delete;
  Gate& operator=(Gate const&) = delete;

  void open()
  {
    {
      std::lock_guard lock(m_);
      open_ = true;
    }
    cv_.notify_all();
  }
  bool reached()
  {
    std::lock_guard lock(m_);
    return reached_;
  }

 private:
  static void CUDART_CB hold(void* p)
  {
    auto* g = static_cast<Gate*>(p);
    std::unique_lock lock(g->m_);
    g->reached_ = true;
    g->cv_.wait(lock, [&] { return g->open_; });
    g->done_ = true;
    g->cv_.notify_all();
  }

  std::mutex m_;
  std::condition_variable cv_;
  bool open_    = false;
  bool reached_ = false;
  bool done_    = false;
};

// Polls `condition` for up to 10 s.
bool eventually(std::function<bool()> const& condition)
{
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) { return false; }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

TEST(EmulatorObservation, StreamWaitingOnAnotherStreamsEventIsBlocked)
{
  auto const& ctl     = emu::control();
  cudaStream_t first  = nullptr;
  cudaStream_t second = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking));
  cudaEvent_t event = nullptr;
  ASSERT_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  void* p = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 4096));
  EXPECT_EQ(ctl.stream_blocked(second), 0) << "an idle stream is not blocked";
  {
    Gate gate{first};
    ASSERT_CUDA(cudaEventRecord(event, first));
    ASSERT_CUDA(cudaStreamWaitEvent(second, event, 0));
    ASSERT_CUDA(cudaMemsetAsync(p, 1, 4096, second));
    EXPECT_TRUE(eventually([&] { return ctl.stream_blocked(second) == 1; }));
    ASSERT_TRUE(eventually([&] { return gate.reached(); }));
    EXPECT_EQ(ctl.stream_blocked(first), 0) << "running a host function is not waiting on another stream";
    EXPECT_EQ(cudaStreamQuery(second), cudaErrorNotReady);
    gate.open();
    ASSERT_CUDA(cudaStreamSynchronize(second));
  }
  EXPECT_EQ(ctl.stream_blocked(second), 0);
  // Work that waits only on completed work is never blocked.
  ASSERT_CUDA(cudaStreamWaitEvent(second, event, 0));
  EXPECT_EQ(ctl.stream_blocked(second), 0);
  EXPECT_CUDA(cudaFree(p));
  EXPECT_CUDA(cudaEventDestroy(event));
  EXPECT_CUDA(cudaStreamDestroy(first));
  EXPECT_CUDA(cudaStreamDestroy(second));
}

TEST(EmulatorObservation, LegacyStreamBlockedByABlockingStreamsWork)
{
  auto const& ctl       = emu::control();
  cudaStream_t blocking = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&blocking));
  std::atomic<int> ran{0};
  {
    Gate gate{blocking};
    ASSERT_CUDA(cudaLaunchHostFunc(
      cudaStreamLegacy, [](void* f) { static_cast<std::atomic<int>*>(f)->store(1); }, &ran));
    EXPECT_TRUE(eventually([&] { return ctl.stream_blocked(cudaStreamLegacy) == 1; }));
    EXPECT_EQ(ctl.stream_blocked(nullptr), 1) << "0 names the legacy stream too";
    EXPECT_EQ(ran.load(), 0);
  }
  ASSERT_CUDA(cudaStreamSynchronize(cudaStreamLegacy));
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(ctl.stream_blocked(cudaStreamLegacy), 0);
  EXPECT_CUDA(cudaStreamDestroy(blocking));
}

TEST(EmulatorObservation, StreamBlockedRejectsUnknownHandles)
{
  auto const& ctl = emu::control();
  cudaStream_t s  = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  EXPECT_CUDA(cudaStreamDestroy(s));
  EXPECT_EQ(ctl.stream_blocked(s), -1);
  EXPECT_EQ(ctl.stream_blocked(cudaStreamPerThread), 0) << "the calling thread's per-thread stream";
}

TEST(EmulatorObservation, HostWaitersCountThreadsWaitingForStreamWork)
{
  auto const& ctl = emu::control();
  ASSERT_EQ(ctl.host_waiters(), 0);
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t event = nullptr;
  ASSERT_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  void* p = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 4096));
  {
    Gate gate{s};
    ASSERT_CUDA(cudaEventRecord(event, s));
    ASSERT_TRUE(eventually([&] { return gate.reached(); }));
    EXPECT_EQ(ctl.host_waiters(), 0) << "a stream worker inside a host function is no host waiter";
    ASSERT_CUDA(cudaStreamSynchronize(nullptr)) << "waiting for nothing pending is no wait";
    EXPECT_EQ(ctl.host_waiters(), 0);

    auto stream_sync = std::async(std::launch::async, [&] { return cudaStreamSynchronize(s); });
    auto event_sync  = std::async(std::launch::async, [&] { return cudaEventSynchronize(event); });
    auto device_sync = std::async(std::launch::async, [&] { return cudaDeviceSynchronize(); });
    auto free_wait   = std::async(std::launch::async, [&] { return cudaFree(p); });
    EXPECT_TRUE(eventually([&] { return ctl.host_waiters() == 4; })) << ctl.host_waiters();
    EXPECT_EQ(stream_sync.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
    gate.open();
    EXPECT_CUDA(stream_sync.get());
    EXPECT_CUDA(event_sync.get());
    EXPECT_CUDA(device_sync.get());
    EXPECT_CUDA(free_wait.get());
  }
  EXPECT_EQ(ctl.host_waiters(), 0);
  EXPECT_CUDA(cudaEventDestroy(event));
  EXPECT_CUDA(cudaStreamDestroy(s));
}

TEST(EmulatorObservation, PausedEventRecordHoldsTheRecordingThreadAfterEnqueuing)
{
  auto const& ctl    = emu::control();
  cudaStream_t armed = nullptr;
  cudaStream_t other = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&armed));
  ASSERT_CUDA(cudaStreamCreate(&other));
  cudaEvent_t event = nullptr;
  ASSERT_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  ASSERT_EQ(ctl.pause_next_event_record(armed), 0);
  ASSERT_CUDA(cudaEventRecord(event, other)) << "records on other streams are not held";
  ASSERT_EQ(ctl.paused_event_records(), 0);

  Gate gate{armed};
  auto recording = std::async(std::launch::async, [&] { return cudaEventRecord(event, armed); });
  ASSERT_TRUE(eventually([&] { return ctl.paused_event_records() == 1; }));
  EXPECT_EQ(recording.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ(cudaEventQuery(event), cudaErrorNotReady) << "the record is enqueued, behind the gate";
  ctl.resume_event_records();
  EXPECT_CUDA(recording.get());
  EXPECT_EQ(ctl.paused_event_records(), 0);
  auto again = std::async(std::launch::async, [&] { return cudaEventRecord(event, armed); });
  EXPECT_TRUE(eventually([&] { return again.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }))
    << "the pause is one-shot";
  ctl.resume_event_records();
  EXPECT_CUDA(again.get());
  gate.open();
  ASSERT_CUDA(cudaEventSynchronize(event));

  EXPECT_EQ(ctl.pause_next_event_record(reinterpret_cast<void*>(0x1234)), -1);
  ASSERT_EQ(ctl.pause_next_event_record(armed), 0);
  ctl.resume_event_records();  // disarms
  ASSERT_CUDA(cudaEventRecord(event, armed));
  EXPECT_CUDA(cudaEventDestroy(event));
  EXPECT_CUDA(cudaStreamDestroy(armed));
  EXPECT_CUDA(cudaStreamDestroy(other));
}

TEST(EmulatorObservation, RecycledStreamHandleNamesTheNewStreamOnly)
{
  auto const& ctl = emu::control();
  void* p         = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 4096));
  cudaStream_t first  = nullptr;
  cudaStream_t second = nullptr;
  {
    emu::Knob reuse("RMM_EMU_REUSE_STREAM_HANDLES", "1");
    ASSERT_CUDA(cudaStreamCreate(&first));
    Gate gate{first};
    ASSERT_CUDA(cudaMemsetAsync(p, 0xAA, 4096, first));
    ASSERT_CUDA(cudaStreamDestroy(first));  // its work stays queued behind the gate
    ASSERT_CUDA(cudaStreamCreate(&second));
    EXPECT_EQ(second, first) << "the destroyed stream's handle is handed out again";
    // The handle names the new stream, which shares nothing with the old one's queue.
    ASSERT_CUDA(cudaMemsetAsync(p, 0xBB, 4096, second));
    ASSERT_CUDA(cudaStreamSynchronize(second));
    EXPECT_EQ(ctl.stream_blocked(second), 0);
    unsigned char byte = 0;
    ASSERT_CUDA(cudaMemcpyAsync(&byte, p, 1, cudaMemcpyDeviceToHost, second));
    ASSERT_CUDA(cudaStreamSynchronize(second));
    EXPECT_EQ(byte, 0xBB);
    gate.open();
    ASSERT_CUDA(cudaDeviceSynchronize());
    ASSERT_CUDA(cudaMemcpy(&byte, p, 1, cudaMemcpyDeviceToHost));
    EXPECT_EQ(byte, 0xAA) << "the old stream's write still ran, after the gate";
    EXPECT_CUDA(cudaStreamDestroy(second));
  }
  // Without the knob a handle is not reused while the destroyed stream still has work queued.
  ASSERT_CUDA(cudaStreamCreate(&first));
  {
    Gate gate{first};
    ASSERT_CUDA(cudaStreamDestroy(first));
    ASSERT_CUDA(cudaStreamCreate(&second));
    EXPECT_NE(second, first);
  }
  EXPECT_CUDA(cudaStreamDestroy(second));
  EXPECT_CUDA(cudaFree(p));
}

}  // namespace
