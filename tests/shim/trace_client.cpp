// SPDX-License-Identifier: Apache-2.0
// Replays an allocation log with cudaMalloc and cudaFree, in log order on one thread, the way a
// framework with its cache off allocates, while the program keeps idle non-blocking streams (as
// PyTorch keeps its pool of them). Run under the shim, whose report then says what the stack
// reserved for the log's peak of live bytes.
//
//   trace_client LOG STREAMS
//
// STREAMS non-blocking streams are created before the first allocation. Prints peak_live=BYTES.

#include "allocation_log.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

void check(cudaError_t status, char const* what)
{
  if (status == cudaSuccess) { return; }
  std::fprintf(stderr, "trace_client: %s failed: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 3) {
    std::fprintf(stderr, "usage: trace_client LOG STREAMS\n");
    return 2;
  }
  std::vector<rmm::trace::event> events;
  try {
    events = rmm::trace::read_log(argv[1]);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "trace_client: %s\n", e.what());
    return 2;
  }
  int const stream_count = std::atoi(argv[2]);

  check(cudaSetDevice(0), "cudaSetDevice");
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(stream_count));
  for (auto& s : streams) { check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }

  std::unordered_map<std::uintptr_t, std::pair<void*, std::size_t>> live;
  std::size_t live_bytes = 0;
  std::size_t peak_live  = 0;
  for (auto const& e : events) {
    if (e.kind == rmm::trace::action::allocate) {
      void* ptr = nullptr;
      check(cudaMalloc(&ptr, e.size), "cudaMalloc");
      live[e.pointer] = {ptr, e.size};
      live_bytes += e.size;
      peak_live = std::max(peak_live, live_bytes);
    } else if (e.kind == rmm::trace::action::free) {
      auto const found = live.find(e.pointer);
      if (found == live.end()) { continue; }  // allocated before the log began
      check(cudaFree(found->second.first), "cudaFree");
      live_bytes -= found->second.second;
      live.erase(found);
    }
  }
  for (auto const& [logged, block] : live) { check(cudaFree(block.first), "cudaFree"); }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  for (auto s : streams) { check(cudaStreamDestroy(s), "cudaStreamDestroy"); }
  std::printf("peak_live=%zu\n", peak_live);
  return 0;
}
