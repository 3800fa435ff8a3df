// SPDX-License-Identifier: Apache-2.0
// A CUDA program with graphs, run under the shim: a graph with memory nodes (cudaMallocAsync and
// cudaFreeAsync captured) writes into a block the shim serves inside a region; the tag, and then
// the whole process, is paused and resumed between launches. Prints `key=value` lines; a failed
// expectation prints `FAIL: ...` and makes the exit status non-zero.

#include <rmm/shim.h>

#include <cuda_runtime.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr std::size_t elements = std::size_t{64} << 20;  // 256 MiB of unsigned: in the graph and out of it
constexpr unsigned seed        = 7;
int failures                   = 0;

void check(cudaError_t status, char const* what)
{
  if (status != cudaSuccess) {
    std::printf("FAIL: %s: %s\n", what, cudaGetErrorName(status));
    std::exit(2);
  }
}

void expect(bool condition, char const* what)
{
  if (!condition) {
    std::printf("FAIL: %s\n", what);
    ++failures;
  }
}

template <class F>
F shim_function(char const* name)
{
  auto* f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  if (f == nullptr) {
    std::printf("FAIL: the shim does not export %s (run it under the shim)\n", name);
    std::exit(2);
  }
  return f;
}

__global__ void fill(unsigned* data, std::size_t n, unsigned value)
{
  for (auto i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    data[i] = value + static_cast<unsigned>(i);
  }
}

__global__ void add_into(unsigned* out, unsigned const* in, std::size_t n)
{
  for (auto i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) { out[i] = in[i] * 3U; }
}

__global__ void count_wrong(unsigned const* out, std::size_t n, unsigned value, unsigned* wrong)
{
  for (auto i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    if (out[i] != (value + static_cast<unsigned>(i)) * 3U) { atomicAdd(wrong, 1U); }
  }
}

/// Elements of `out` that do not hold what the graph writes.
unsigned wrong_in(unsigned const* out, cudaStream_t stream)
{
  unsigned* wrong = nullptr;
  check(cudaMallocAsync(&wrong, sizeof(unsigned), stream), "cudaMallocAsync (counter)");
  check(cudaMemsetAsync(wrong, 0, sizeof(unsigned), stream), "cudaMemsetAsync (counter)");
  count_wrong<<<1024, 256, 0, stream>>>(out, elements, seed, wrong);
  check(cudaGetLastError(), "count_wrong");
  unsigned host = 0;
  check(cudaMemcpyAsync(&host, wrong, sizeof(unsigned), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaFreeAsync(wrong, stream), "cudaFreeAsync (counter)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return host;
}

std::size_t graph_memory(cudaGraphMemAttributeType which)
{
  unsigned long long value = 0;
  check(cudaDeviceGetGraphMemAttribute(0, which, &value), "cudaDeviceGetGraphMemAttribute");
  return static_cast<std::size_t>(value);
}

/// Ends the capture of `stream` and instantiates its graph.
cudaGraphExec_t instantiate_capture(cudaStream_t stream)
{
  cudaGraph_t graph{};
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec{};
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  check(cudaGraphDestroy(graph), "cudaGraphDestroy");
  return exec;
}

/// A graph that allocates its scratch memory, fills it, writes `out` from it and frees it.
cudaGraphExec_t scratch_graph(unsigned* out, cudaStream_t stream)
{
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  unsigned* scratch = nullptr;
  check(cudaMallocAsync(&scratch, elements * sizeof(unsigned), stream), "cudaMallocAsync (captured)");
  fill<<<1024, 256, 0, stream>>>(scratch, elements, seed);
  add_into<<<1024, 256, 0, stream>>>(out, scratch, elements);
  check(cudaFreeAsync(scratch, stream), "cudaFreeAsync (captured)");
  return instantiate_capture(stream);
}

/// A graph that allocates memory and leaves it allocated (the program frees it later).
cudaGraphExec_t leaving_graph(unsigned** kept, cudaStream_t stream)
{
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  check(cudaMallocAsync(kept, elements * sizeof(unsigned), stream), "cudaMallocAsync (captured, kept)");
  fill<<<1024, 256, 0, stream>>>(*kept, elements, seed);
  return instantiate_capture(stream);
}

}  // namespace

int main()
{
  auto const region_begin = shim_function<int (*)(char const*, unsigned)>("rmm_shim_region_begin");
  auto const region_end   = shim_function<int (*)()>("rmm_shim_region_end");
  auto const pause_tag    = shim_function<int (*)(char const*, unsigned)>("rmm_shim_pause_tag");
  auto const resume_tag   = shim_function<int (*)(char const*)>("rmm_shim_resume_tag");
  auto const pause        = shim_function<int (*)(unsigned)>("rmm_shim_pause");
  auto const resume       = shim_function<int (*)()>("rmm_shim_resume");
  auto const message      = shim_function<char const* (*)()>("rmm_shim_last_message");
  auto const say          = [&](char const* step, int rc) {
    std::printf("%s=%d\n%s_message=%s\n", step, rc, step, message());
    expect(rc == 0, step);
  };

  check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream{};
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  expect(region_begin("graphs", 0) == 0, "rmm_shim_region_begin");
  unsigned* out = nullptr;
  check(cudaMalloc(&out, elements * sizeof(unsigned)), "cudaMalloc (served, tagged)");
  auto const exec = scratch_graph(out, stream);
  expect(region_end() == 0, "rmm_shim_region_end");

  check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  std::printf("first_launch_wrong=%u\n", wrong_in(out, stream));
  auto const reserved_before = graph_memory(cudaGraphMemAttrReservedMemCurrent);
  std::printf("graph_reserved_before=%zu\n", reserved_before);
  expect(reserved_before >= elements * sizeof(unsigned), "the graph's scratch memory is mapped after a launch");

  // The tag's pause: its block and the graph's idle memory go back; the contents of `out` are kept.
  say("pause_tag", pause_tag("graphs", 0));
  std::printf("graph_reserved_paused=%zu\n", graph_memory(cudaGraphMemAttrReservedMemCurrent));
  say("resume_tag", resume_tag("graphs"));
  std::printf("kept_wrong=%u\n", wrong_in(out, stream));
  check(cudaMemsetAsync(out, 0, elements * sizeof(unsigned), stream), "cudaMemsetAsync");
  check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch (after the tag's resume)");
  std::printf("relaunch_wrong=%u\n", wrong_in(out, stream));
  std::printf("graph_reserved_relaunched=%zu\n", graph_memory(cudaGraphMemAttrReservedMemCurrent));

  // Dropped contents: the graph writes `out` anew.
  say("pause_discard", pause_tag("graphs", RMM_SHIM_PAUSE_DISCARD));
  say("resume_discard", resume_tag("graphs"));
  check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch (after a discarding pause)");
  std::printf("discard_relaunch_wrong=%u\n", wrong_in(out, stream));

  // The whole process, with a graph allocation still live: it stays mapped, and the pause says so.
  unsigned* kept     = nullptr;
  auto const leaving = leaving_graph(&kept, stream);
  check(cudaGraphLaunch(leaving, stream), "cudaGraphLaunch (leaving its allocation)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  say("pause_process", pause(0));
  std::printf("graph_used_paused=%zu\n", graph_memory(cudaGraphMemAttrUsedMemCurrent));
  std::printf("graph_reserved_process_paused=%zu\n", graph_memory(cudaGraphMemAttrReservedMemCurrent));
  say("resume_process", resume());
  check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch (after the process's resume)");
  std::printf("process_relaunch_wrong=%u\n", wrong_in(out, stream));

  check(cudaFreeAsync(kept, stream), "cudaFreeAsync (the graph's live allocation)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check(cudaGraphExecDestroy(leaving), "cudaGraphExecDestroy");
  check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  check(cudaFree(out), "cudaFree");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("failures=%d\n", failures);
  return failures == 0 ? 0 : 1;
}
