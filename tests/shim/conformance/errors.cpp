// SPDX-License-Identifier: Apache-2.0
// The errors a program sees, as it sees them natively: a request the device cannot meet returns
// out-of-memory and sets the runtime's last error (cudaGetLastError returns it once, then
// cudaSuccess); frees of pointers nobody allocated, of interior pointers and double frees get the
// runtime's own answers.

#include "conformance.hpp"

using namespace conformance;

namespace {

constexpr std::size_t impossible = std::size_t{1} << 50;  // 1 PiB: no device has it

void last_error(std::string const& name)
{
  check(name + ".peek", name_of(cudaPeekAtLastError()));
  check(name + ".last", name_of(cudaGetLastError()));
  check(name + ".last_again", name_of(cudaGetLastError()));
}

}  // namespace

int main()
{
  require(cudaFree(nullptr), "cudaFree(nullptr)");
  void* p = nullptr;
  check("malloc.impossible", name_of(cudaMalloc(&p, impossible)));
  last_error("malloc.impossible");

  cudaStream_t stream{};
  require(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check("malloc_async.impossible", name_of(cudaMallocAsync(&p, impossible, stream)));
  last_error("malloc_async.impossible");
  check("malloc_async.impossible.default_stream", name_of(cudaMallocAsync(&p, impossible, nullptr)));
  last_error("malloc_async.impossible.default_stream");

  CUdeviceptr d = 0;
  check("cuMemAlloc.impossible", name_of(cuMemAlloc(&d, impossible)));
  check("cuMemAllocAsync.impossible", name_of(cuMemAllocAsync(&d, impossible, stream)));

  // After a failure, the next allocation works and leaves no error behind.
  require(cudaMalloc(&p, 4096), "cudaMalloc");
  last_error("malloc.after_failure");

  check("free.interior", name_of(cudaFree(static_cast<char*>(p) + 256)));
  last_error("free.interior");
  require(cudaFree(p), "cudaFree");
  check("free.never_allocated", name_of(cudaFree(reinterpret_cast<void*>(0x7f0012345600))));
  last_error("free.never_allocated");
  check("cuMemFree.never_allocated", name_of(cuMemFree(0x7f0012345600)));

  require(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  require(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}
