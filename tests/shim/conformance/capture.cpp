// SPDX-License-Identifier: Apache-2.0
// Stream capture as programs use it: graph memory nodes on two streams joined inside a capture,
// frees of memory allocated outside a graph, and other threads allocating while one thread
// captures. Each variant prints how its capture ended and whether the graph ran and left the
// expected bytes.

#include "conformance.hpp"

#include <atomic>
#include <thread>
#include <vector>

using namespace conformance;

namespace {

constexpr std::size_t bytes = std::size_t{1} << 20;

char const* mode_name(cudaStreamCaptureMode mode)
{
  switch (mode) {
    case cudaStreamCaptureModeGlobal: return "global";
    case cudaStreamCaptureModeThreadLocal: return "thread_local";
    default: return "relaxed";
  }
}

/// Ends the capture of `stream` and runs the graph; prints how each step went.
void finish(std::string const& name, cudaStream_t stream, void* result, unsigned char expected)
{
  cudaGraph_t graph{};
  auto const ended = cudaStreamEndCapture(stream, &graph);
  check(name + ".end", name_of(ended));
  if (ended != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  cudaGraphExec_t exec{};
  auto const instantiated = cudaGraphInstantiate(&exec, graph, 0);
  if (instantiated == cudaErrorNotSupported) {  // no graphs on this CUDA: the capture is what counts
    (void)cudaGetLastError();
    fact(name + ".graphs", "not supported");
    return;
  }
  check(name + ".instantiate", name_of(instantiated));
  if (instantiated != cudaSuccess) { return; }
  check(name + ".launch", name_of(cudaGraphLaunch(exec, stream)));
  check(name + ".synchronize", name_of(cudaStreamSynchronize(stream)));
  if (result != nullptr) {
    unsigned char byte = 0;
    require(cudaMemcpy(&byte, static_cast<char*>(result) + bytes - 1, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(name + ".result", byte == expected);
  }
  require(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  require(cudaGraphDestroy(graph), "cudaGraphDestroy");
}

/// A capture on a non-blocking stream that creates a second stream inside it, joins it with an
/// event, and allocates, sets and frees memory on both (graph memory nodes); the result is copied
/// into memory allocated before the capture.
void two_streams(cudaStreamCaptureMode mode, unsigned int second_flags)
{
  std::string const name = std::string{"two_streams."} + mode_name(mode) +
                           (second_flags == cudaStreamNonBlocking ? ".non_blocking" : ".blocking");
  cudaStream_t first{};
  require(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* result = nullptr;
  require(cudaMalloc(&result, bytes), "cudaMalloc");
  cudaEvent_t fork{}, join{};
  require(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), "cudaEventCreate");
  require(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), "cudaEventCreate");

  require(cudaStreamBeginCapture(first, mode), "cudaStreamBeginCapture");
  cudaStream_t second{};
  require(cudaStreamCreateWithFlags(&second, second_flags), "cudaStreamCreateWithFlags (in the capture)");
  require(cudaEventRecord(fork, first), "cudaEventRecord");
  require(cudaStreamWaitEvent(second, fork, 0), "cudaStreamWaitEvent");
  void* a            = nullptr;
  void* b            = nullptr;
  auto const alloc_a = cudaMallocAsync(&a, bytes, first);
  auto const alloc_b = cudaMallocAsync(&b, bytes, second);
  check(name + ".alloc", name_of(alloc_a) + "," + name_of(alloc_b));
  if (alloc_a == cudaSuccess && alloc_b == cudaSuccess) {
    (void)cudaMemsetAsync(a, 0x21, bytes, first);
    (void)cudaMemsetAsync(b, 0x42, bytes, second);
    (void)cudaFreeAsync(a, first);
    (void)cudaMemcpyAsync(result, b, bytes, cudaMemcpyDeviceToDevice, second);
    (void)cudaFreeAsync(b, second);
  }
  (void)cudaEventRecord(join, second);
  (void)cudaStreamWaitEvent(first, join, 0);
  finish(name, first, result, 0x42);
  require(cudaStreamDestroy(second), "cudaStreamDestroy");
  require(cudaStreamSynchronize(first), "cudaStreamSynchronize");
  require(cudaFree(result), "cudaFree");
  require(cudaEventDestroy(fork), "cudaEventDestroy");
  require(cudaEventDestroy(join), "cudaEventDestroy");
  require(cudaStreamDestroy(first), "cudaStreamDestroy");
}

/// A graph that frees memory allocated before it (cudaMallocAsync outside the capture).
void frees_outside_memory()
{
  cudaStream_t stream{};
  require(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* outside = nullptr;
  require(cudaMallocAsync(&outside, bytes, stream), "cudaMallocAsync");
  require(cudaMemsetAsync(outside, 0x11, bytes, stream), "cudaMemsetAsync");
  require(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  require(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  check("frees_outside_memory.free", name_of(cudaFreeAsync(outside, stream)));
  finish("frees_outside_memory", stream, nullptr, 0);
  require(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

/// Memory a graph allocates and the program frees after the graph ran.
void graph_memory_freed_after()
{
  cudaStream_t stream{};
  require(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* inside = nullptr;
  require(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  auto const allocated = cudaMallocAsync(&inside, bytes, stream);
  check("graph_memory_freed_after.alloc", name_of(allocated));
  if (allocated == cudaSuccess) { (void)cudaMemsetAsync(inside, 0x33, bytes, stream); }
  finish("graph_memory_freed_after", stream, allocated == cudaSuccess ? inside : nullptr, 0x33);
  if (allocated == cudaSuccess) {
    check("graph_memory_freed_after.free", name_of(cudaFreeAsync(inside, stream)));
    check("graph_memory_freed_after.free_synchronize", name_of(cudaStreamSynchronize(stream)));
  }
  require(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

/// One thread captures while another allocates and frees on its own non-blocking stream (and,
/// with a thread-local or relaxed capture, with cudaMalloc and cudaFree too).
void other_thread_allocates(cudaStreamCaptureMode mode, unsigned int capture_flags)
{
  std::string const name = std::string{"other_thread_allocates."} + mode_name(mode) +
                           (capture_flags == cudaStreamNonBlocking ? ".non_blocking" : ".blocking");
  cudaStream_t capturing{};
  require(cudaStreamCreateWithFlags(&capturing, capture_flags), "cudaStreamCreateWithFlags");
  void* result = nullptr;
  require(cudaMalloc(&result, bytes), "cudaMalloc");
  std::atomic<int> stage{0};
  std::atomic<int> failures{0};
  std::thread other{[&] {
    require(cudaSetDevice(0), "cudaSetDevice");
    cudaStream_t own{};
    require(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    while (stage.load() == 0) { std::this_thread::yield(); }
    for (int i = 0; i < 100; ++i) {
      void* p = nullptr;
      if (cudaMallocAsync(&p, 4096 + 512 * static_cast<std::size_t>(i % 7), own) != cudaSuccess) { ++failures; }
      if (p != nullptr && cudaFreeAsync(p, own) != cudaSuccess) { ++failures; }
      if (mode != cudaStreamCaptureModeGlobal) {  // in a global capture these are the program's error
        void* q = nullptr;
        if (cudaMalloc(&q, 8192 + 512 * static_cast<std::size_t>(i % 5)) != cudaSuccess) { ++failures; }
        if (q != nullptr && cudaFree(q) != cudaSuccess) { ++failures; }
      }
    }
    if (cudaStreamSynchronize(own) != cudaSuccess) { ++failures; }
    (void)cudaStreamDestroy(own);
    stage.store(2);
  }};
  require(cudaStreamBeginCapture(capturing, mode), "cudaStreamBeginCapture");
  (void)cudaMemsetAsync(result, 0x55, bytes, capturing);
  stage.store(1);
  while (stage.load() != 2) { std::this_thread::yield(); }
  other.join();
  if (mode == cudaStreamCaptureModeGlobal) {
    // In a global capture, allocating on another stream is the program's error (refused, and the
    // capture ends as invalid): the shim may serve it instead, so the runs differ.
    fact(name + ".other_thread_failures", failures.load());
    cudaGraph_t graph{};
    fact(name + ".end", name_of(cudaStreamEndCapture(capturing, &graph)));
    if (graph != nullptr) { (void)cudaGraphDestroy(graph); }
    (void)cudaGetLastError();
  } else {
    check(name + ".other_thread_failures", std::to_string(failures.load()));
    finish(name, capturing, result, 0x55);
  }
  require(cudaStreamSynchronize(capturing), "cudaStreamSynchronize");
  require(cudaFree(result), "cudaFree");
  require(cudaStreamDestroy(capturing), "cudaStreamDestroy");
}

/// Streams created and destroyed while another one captures, in every mode: legal, and nothing the
/// shim does about them (asking whether a destroyed stream still has work, fencing a new one) may
/// end the capture.
void streams_come_and_go(cudaStreamCaptureMode mode)
{
  std::string const name = std::string{"streams_come_and_go."} + mode_name(mode);
  cudaStream_t capturing{};
  require(cudaStreamCreateWithFlags(&capturing, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* busy_block = nullptr;
  require(cudaMalloc(&busy_block, bytes), "cudaMalloc");
  cudaStream_t busy{};
  require(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* result = nullptr;
  require(cudaMalloc(&result, bytes), "cudaMalloc");
  require(cudaStreamBeginCapture(capturing, mode), "cudaStreamBeginCapture");
  (void)cudaMemsetAsync(result, 0x66, bytes, capturing);
  require(cudaMemsetAsync(busy_block, 1, bytes, busy), "cudaMemsetAsync (a stream with work)");
  check(name + ".destroy_busy", name_of(cudaStreamDestroy(busy)));
  cudaStream_t fresh{};
  check(name + ".create", name_of(cudaStreamCreateWithFlags(&fresh, cudaStreamNonBlocking)));
  check(name + ".destroy_fresh", name_of(cudaStreamDestroy(fresh)));
  finish(name, capturing, result, 0x66);
  require(cudaStreamSynchronize(capturing), "cudaStreamSynchronize");
  require(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  require(cudaFree(result), "cudaFree");
  require(cudaFree(busy_block), "cudaFree");
  require(cudaStreamDestroy(capturing), "cudaStreamDestroy");
}

}  // namespace

int main()
{
  require(cudaFree(nullptr), "cudaFree(nullptr)");
  for (auto mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed}) {
    two_streams(mode, cudaStreamNonBlocking);
    two_streams(mode, cudaStreamDefault);
  }
  for (auto mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed}) {
    streams_come_and_go(mode);
  }
  frees_outside_memory();
  graph_memory_freed_after();
  for (auto mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed}) {
    other_thread_allocates(mode, cudaStreamNonBlocking);
    other_thread_allocates(mode, cudaStreamDefault);
  }
  return 0;
}
