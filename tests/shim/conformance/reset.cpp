// SPDX-License-Identifier: Apache-2.0
// cudaDeviceReset destroys every allocation, stream and event of the device: memory allocated
// after it must be usable, and a free of memory from before it gets the runtime's own answer.

#include "conformance.hpp"

#include <vector>

using namespace conformance;

namespace {

bool usable(void* p, std::size_t bytes, unsigned char value)
{
  if (cudaMemset(p, value, bytes) != cudaSuccess) { return false; }
  std::vector<unsigned char> host(bytes);
  if (cudaMemcpy(host.data(), p, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) { return false; }
  for (auto b : host) {
    if (b != value) { return false; }
  }
  return true;
}

/// Allocations of the sizes a program makes before and after the reset, checked and freed, some
/// kept: the pointers that outlive the reset.
std::vector<void*> allocate_round(int round, cudaStream_t stream, bool keep_some)
{
  std::vector<void*> kept;
  bool all_usable = true;
  for (int i = 0; i < 40; ++i) {
    std::size_t const size = 4096 * static_cast<std::size_t>(1 + i % 9);
    void* p                = nullptr;
    require(cudaMalloc(&p, size), "cudaMalloc");
    all_usable = all_usable && usable(p, size, static_cast<unsigned char>(i + round));
    void* q    = nullptr;
    require(cudaMallocAsync(&q, size, stream), "cudaMallocAsync");
    require(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    all_usable = all_usable && usable(q, size, static_cast<unsigned char>(i + round + 1));
    if (keep_some && i % 10 == 0) {
      kept.push_back(p);
    } else {
      require(cudaFree(p), "cudaFree");
    }
    require(cudaFreeAsync(q, stream), "cudaFreeAsync");
  }
  require(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check("round" + std::to_string(round) + ".usable", all_usable);
  return kept;
}

/// What a reset does to what a memory manager keeps, for people: whether memory mapped with the
/// virtual memory API survives it, and whether the primary context and the legacy stream keep
/// their handle and id.
void reset_facts()
{
  require(cudaFree(nullptr), "cudaFree(nullptr)");
  CUcontext before{};
  require(cuCtxGetCurrent(&before), "cuCtxGetCurrent");
  unsigned long long legacy_before = 0;
  require(cuStreamGetId(CU_STREAM_LEGACY, &legacy_before), "cuStreamGetId");
  CUmemAllocationProp prop{};
  prop.type               = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type      = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id        = 0;
  std::size_t granularity = 0;
  require(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity");
  CUdeviceptr va{};
  require(cuMemAddressReserve(&va, granularity, 0, 0, 0), "cuMemAddressReserve");
  CUmemGenericAllocationHandle handle{};
  require(cuMemCreate(&handle, granularity, &prop, 0), "cuMemCreate");
  require(cuMemMap(va, granularity, 0, handle, 0), "cuMemMap");
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  require(cuMemSetAccess(va, granularity, &access, 1), "cuMemSetAccess");
  require(cudaMemset(reinterpret_cast<void*>(va), 0x77, granularity), "cudaMemset (mapped)");
  require(cudaDeviceReset(), "cudaDeviceReset");
  require(cudaFree(nullptr), "cudaFree(nullptr)");
  CUcontext after{};
  require(cuCtxGetCurrent(&after), "cuCtxGetCurrent");
  fact("reset.same_primary_context_handle", std::to_string(before == after));
  unsigned long long legacy_after = 0;
  require(cuStreamGetId(CU_STREAM_LEGACY, &legacy_after), "cuStreamGetId");
  fact("reset.same_legacy_stream_id", std::to_string(legacy_before == legacy_after));
  unsigned char byte = 0;
  auto const read    = cudaMemcpy(&byte, reinterpret_cast<void*>(va), 1, cudaMemcpyDeviceToHost);
  fact("reset.mapped_memory_read", name_of(read) + "," + std::to_string(byte));
  (void)cudaGetLastError();
  fact("reset.unmap", name_of(cuMemUnmap(va, granularity)));
  fact("reset.release", name_of(cuMemRelease(handle)));
  fact("reset.address_free", name_of(cuMemAddressFree(va, granularity)));
}

}  // namespace

int main()
{
  reset_facts();
  for (int round = 0; round < 3; ++round) {
    // A non-blocking stream before the reset: it dies with the reset, as do the events the
    // program (or a memory manager) recorded on it.
    cudaStream_t stream{};
    require(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    auto const kept = allocate_round(round, stream, true);
    // The same size again, right after a free of it: what a kept block would serve.
    void* p = nullptr;
    require(cudaMalloc(&p, 4096), "cudaMalloc");
    require(cudaFree(p), "cudaFree");
    require(cudaDeviceReset(), "cudaDeviceReset");
    // After the reset: the program's old pointers are gone, and its frees get the runtime's answer.
    auto const stale_free = cudaFree(kept.front());
    check("round" + std::to_string(round) + ".stale_free", name_of(stale_free));
    (void)cudaGetLastError();
    // New memory, of the sizes used before: usable, none of it the old blocks' bookkeeping.
    cudaStream_t fresh{};
    require(cudaStreamCreateWithFlags(&fresh, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    auto const after = allocate_round(round + 10, fresh, false);
    require(cudaStreamDestroy(fresh), "cudaStreamDestroy");
    (void)after;
  }
  std::size_t free = 0, total = 0;
  require(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  check("memory_info.free_within_total", free <= total);
  require(cudaDeviceReset(), "cudaDeviceReset");
  return 0;
}
