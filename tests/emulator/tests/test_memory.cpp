// SPDX-License-Identifier: Apache-2.0
// Synchronous memory: zero sizes, alignment, pointer attributes, invalid frees, copy bounds,
// capacity accounting and out-of-memory, poison bytes.
#include "emu_test.hpp"

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kGiB = std::size_t{1} << 30;

std::uintptr_t addr(void const* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(EmulatorMemory, ZeroSizeAllocationsAreNull)
{
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_CUDA(cudaMalloc(&p, 0));
  EXPECT_EQ(p, nullptr);
  p = reinterpret_cast<void*>(0x1);
  EXPECT_CUDA(cudaMallocManaged(&p, 0));
  EXPECT_EQ(p, nullptr);
  p = reinterpret_cast<void*>(0x1);
  EXPECT_CUDA(cudaMallocHost(&p, 0));
  EXPECT_EQ(p, nullptr);
  p = reinterpret_cast<void*>(0x1);
  EXPECT_CUDA(cudaMallocAsync(&p, 0, nullptr));
  EXPECT_EQ(p, nullptr);
  EXPECT_CUDA(cudaFree(nullptr));
  EXPECT_CUDA(cudaFreeHost(nullptr));
  EXPECT_CUDA(cudaFreeAsync(nullptr, nullptr));
  EXPECT_EQ(cudaMalloc(nullptr, 16), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(EmulatorMemory, AlignmentAndSpacing)
{
  std::vector<void*> ptrs;
  for (std::size_t size : {1, 3, 255, 256, 257, 4095, 65537, 1 << 20, (1 << 20) + 1}) {
    void* p = nullptr;
    ASSERT_CUDA(cudaMalloc(&p, size));
    EXPECT_EQ(addr(p) % 256, 0u) << size;
    ptrs.push_back(p);
  }
  for (void* p : ptrs) { EXPECT_CUDA(cudaFree(p)); }
  // Consecutive 1-byte allocations sit 512 bytes apart, as on the H200.
  void* a[3]{};
  for (auto& x : a) { ASSERT_CUDA(cudaMalloc(&x, 1)); }
  EXPECT_EQ(addr(a[1]) - addr(a[0]), 512u);
  EXPECT_EQ(addr(a[2]) - addr(a[1]), 512u);
  for (auto x : a) { EXPECT_CUDA(cudaFree(x)); }
}

TEST(EmulatorMemory, PointerAttributes)
{
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, kMiB));
  cudaPointerAttributes attr{};
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, static_cast<char*>(d) + 4096));
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, 0);
  EXPECT_EQ(attr.devicePointer, static_cast<char*>(d) + 4096);
  EXPECT_EQ(attr.hostPointer, nullptr);
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, static_cast<char*>(d) + kMiB));  // one past the end
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered);
  EXPECT_EQ(attr.device, -2);
  int on_stack = 0;
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, &on_stack));
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered);
  EXPECT_EQ(attr.device, -2);
  EXPECT_EQ(attr.hostPointer, &on_stack);
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, nullptr));
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered);
  void* m = nullptr;
  ASSERT_CUDA(cudaMallocManaged(&m, 4096));
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, m));
  EXPECT_EQ(attr.type, cudaMemoryTypeManaged);
  EXPECT_EQ(attr.device, 0);
  void* h = nullptr;
  ASSERT_CUDA(cudaMallocHost(&h, 4096));
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, h));
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  EXPECT_EQ(attr.device, 0);
  EXPECT_EQ(attr.devicePointer, attr.hostPointer);
  void* mapped = nullptr;
  ASSERT_CUDA(cudaHostGetDevicePointer(&mapped, h, 0));
  EXPECT_EQ(mapped, h);
  EXPECT_CUDA(cudaFreeHost(h));
  EXPECT_CUDA(cudaFree(m));
  // Address ranges through the driver, reached the way the shim will reach it.
  using range_fn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  auto range     = emu::driver_entry<range_fn>("cuMemGetAddressRange", 3020);
  ASSERT_NE(range, nullptr);
  CUdeviceptr base = 0;
  std::size_t size = 0;
  ASSERT_EQ(range(&base, &size, reinterpret_cast<CUdeviceptr>(d) + 100), CUDA_SUCCESS);
  EXPECT_EQ(base, reinterpret_cast<CUdeviceptr>(d));
  EXPECT_EQ(size, kMiB);
  EXPECT_CUDA(cudaFree(d));
  EXPECT_EQ(range(&base, &size, reinterpret_cast<CUdeviceptr>(d)), CUDA_ERROR_NOT_FOUND);
}

TEST(EmulatorMemory, InvalidFrees)
{
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, kMiB));
  int on_stack = 0;
  EXPECT_EQ(cudaFree(static_cast<char*>(d) + 256), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(&on_stack), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(reinterpret_cast<void*>(0x1234)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFreeAsync(&on_stack, nullptr), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaStreamSynchronize(nullptr));
  EXPECT_EQ(cudaFreeHost(d), cudaErrorInvalidValue);
  void* h = nullptr;
  ASSERT_CUDA(cudaMallocHost(&h, 4096));
  EXPECT_EQ(cudaFree(h), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaFreeHost(h));
  EXPECT_EQ(cudaFreeHost(h), cudaErrorInvalidValue);  // double free
  EXPECT_CUDA(cudaFree(d));
  EXPECT_EQ(cudaFree(d), cudaErrorInvalidValue);  // double free
  (void)cudaGetLastError();
}

TEST(EmulatorMemory, CopiesAndSetsAreBoundsChecked)
{
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 1024));
  char host[64]{};
  EXPECT_EQ(cudaMemset(d, 0, 2048), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host, static_cast<char*>(d) + 1020, 16, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(static_cast<char*>(d) + 1000, host, 64, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyAsync(static_cast<char*>(d) + 1000, d, 64, cudaMemcpyDeviceToDevice, nullptr),
            cudaErrorInvalidValue);
  EXPECT_CUDA(cudaMemcpy(host, d, 16, cudaMemcpyDefault));
  EXPECT_EQ(cudaMemcpy(host, d, 16, cudaMemcpyHostToDevice), cudaErrorInvalidValue);  // wrong kind
  EXPECT_EQ(cudaMemcpy(host, d, 16, cudaMemcpyHostToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host, d, 16, static_cast<cudaMemcpyKind>(7)), cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(cudaMemset(host, 0, 16), cudaErrorInvalidValue);  // not device memory
  EXPECT_CUDA(cudaFree(d));
  // Freed device memory is still recognisably device memory: using it is an error.
  EXPECT_EQ(cudaMemset(d, 0, 16), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host, d, 16, cudaMemcpyDefault), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(EmulatorMemory, CopiesMoveData)
{
  std::vector<unsigned char> in(100000);
  for (std::size_t i = 0; i < in.size(); ++i) { in[i] = static_cast<unsigned char>(i * 7); }
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_CUDA(cudaMalloc(&a, in.size()));
  ASSERT_CUDA(cudaSetDevice(1));
  ASSERT_CUDA(cudaMalloc(&b, in.size()));
  ASSERT_CUDA(cudaSetDevice(0));
  ASSERT_CUDA(cudaMemcpy(a, in.data(), in.size(), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpyPeer(b, 1, a, 0, in.size()));
  std::vector<unsigned char> out(in.size());
  ASSERT_CUDA(cudaMemcpy(out.data(), b, out.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(in, out);
  ASSERT_CUDA(cudaMemset(a, 0x3c, 10));
  ASSERT_CUDA(cudaMemcpy(out.data(), a, 11, cudaMemcpyDefault));
  EXPECT_EQ(out[9], 0x3c);
  EXPECT_EQ(out[10], in[10]);
  EXPECT_CUDA(cudaFree(a));
  EXPECT_CUDA(cudaFree(b));
}

TEST(EmulatorMemory, HostToHostCopiesAreSynchronous)
{
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  ASSERT_CUDA(cudaLaunchHostFunc(
    s, [](void*) { emu::sleep_ms(100); }, nullptr));
  int from = 42;
  int to   = 0;
  ASSERT_CUDA(cudaMemcpyAsync(&to, &from, sizeof(int), cudaMemcpyHostToHost, s));
  EXPECT_EQ(to, 42);  // "fully synchronous with respect to the host", even when queued behind work
  EXPECT_CUDA(cudaStreamDestroy(s));
}

TEST(EmulatorMemory, FreshMemoryIsPoisoned)
{
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 4096));
  unsigned char host[4096]{};
  ASSERT_CUDA(cudaMemcpy(host, d, sizeof(host), cudaMemcpyDeviceToHost));
  EXPECT_EQ(host[0], 0xCD);
  EXPECT_EQ(host[4095], 0xCD);
  EXPECT_CUDA(cudaFree(d));
}

TEST(EmulatorMemory, CapacityAccounting)
{
  std::size_t free0 = 0;
  std::size_t total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free0, &total));
  EXPECT_EQ(total, 16 * kGiB);
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 64 * kMiB));
  std::size_t free1 = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
  EXPECT_EQ(free0 - free1, 64 * kMiB);
  // Managed and pinned memory do not count against the device.
  void* m = nullptr;
  void* h = nullptr;
  ASSERT_CUDA(cudaMallocManaged(&m, kGiB));
  ASSERT_CUDA(cudaMallocHost(&h, 64 * kMiB));
  std::size_t free2 = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free2, &total));
  EXPECT_EQ(free2, free1);
  EXPECT_CUDA(cudaFree(m));
  EXPECT_CUDA(cudaFreeHost(h));
  EXPECT_CUDA(cudaFree(d));
  ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
  EXPECT_EQ(free1, free0);
}

TEST(EmulatorMemory, OutOfMemory)
{
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, std::size_t{1} << 50), cudaErrorMemoryAllocation);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaMallocManaged(&p, std::size_t{1} << 50), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaMallocHost(&p, std::size_t{1} << 50), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaMalloc(&p, 17 * kGiB), cudaErrorMemoryAllocation);
  // The capacity is the sum that counts: 10 GiB fits once, not twice.
  void* a = nullptr;
  ASSERT_CUDA(cudaMalloc(&a, 10 * kGiB));
  EXPECT_EQ(cudaMalloc(&p, 10 * kGiB), cudaErrorMemoryAllocation);
  ASSERT_CUDA(cudaSetDevice(1));
  void* b = nullptr;
  EXPECT_CUDA(cudaMalloc(&b, 10 * kGiB));  // another device, another capacity
  EXPECT_CUDA(cudaFree(b));
  ASSERT_CUDA(cudaSetDevice(0));
  EXPECT_CUDA(cudaFree(a));
  (void)cudaGetLastError();
}

TEST(EmulatorMemory, OutOfMemoryFirstReleasesIdlePoolMemory)
{
  cudaMemPool_t pool = nullptr;
  ASSERT_CUDA(cudaDeviceGetDefaultMemPool(&pool, 0));
  std::uint64_t keep = UINT64_MAX;
  ASSERT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  void* p = nullptr;
  ASSERT_CUDA(cudaMallocAsync(&p, 10 * kGiB, nullptr));
  ASSERT_CUDA(cudaFreeAsync(p, nullptr));
  ASSERT_CUDA(cudaStreamSynchronize(nullptr));
  std::uint64_t reserved = 0;
  ASSERT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  EXPECT_EQ(reserved, 10 * kGiB);  // kept: the threshold says so
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 10 * kGiB));  // fits only once the pool gives its memory back
  ASSERT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  EXPECT_EQ(reserved, 0u);
  EXPECT_CUDA(cudaFree(d));
  keep = 0;
  ASSERT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

TEST(EmulatorMemory, PageableMemoryAccessMakesHostMemoryDeviceMemory)
{
  std::vector<unsigned char> host(4096, 0);
  EXPECT_EQ(cudaMemset(host.data(), 1, host.size()), cudaErrorInvalidValue);
  cudaMemLocation dev0{cudaMemLocationTypeDevice, 0};
  EXPECT_EQ(cudaMemPrefetchAsync(host.data(), host.size(), dev0, 0, nullptr), cudaErrorInvalidValue);
  {
    emu::Knob hmm("RMM_EMU_PAGEABLE_MEMORY_ACCESS", "1");
    EXPECT_CUDA(cudaMemset(host.data(), 1, host.size()));
    EXPECT_EQ(host[4095], 1);
    EXPECT_CUDA(cudaMemPrefetchAsync(host.data(), host.size(), dev0, 0, nullptr));
    EXPECT_CUDA(cudaStreamSynchronize(nullptr));
    int last = -9;
    EXPECT_CUDA(cudaMemRangeGetAttribute(&last, sizeof last, cudaMemRangeAttributeLastPrefetchLocation, host.data(),
                                         host.size()));
    EXPECT_EQ(last, 0);
    cudaPointerAttributes attributes{};
    EXPECT_CUDA(cudaPointerGetAttributes(&attributes, host.data()));
    EXPECT_EQ(attributes.type, cudaMemoryTypeUnregistered);
    EXPECT_EQ(attributes.devicePointer, host.data()) << "the device reaches it at the same address";
  }
  cudaPointerAttributes attributes{};
  EXPECT_CUDA(cudaPointerGetAttributes(&attributes, host.data()));
  EXPECT_EQ(attributes.devicePointer, nullptr);
  (void)cudaGetLastError();
}

TEST(EmulatorMemory, TheLastPrefetchLocationOfEveryByteOfARange)
{
  void* m = nullptr;
  ASSERT_CUDA(cudaMallocManaged(&m, 2 * kMiB));
  auto* bytes    = static_cast<char*>(m);
  auto const ask = [&](void const* p, std::size_t n) {
    int where = -9;
    EXPECT_CUDA(cudaMemRangeGetAttribute(&where, sizeof where, cudaMemRangeAttributeLastPrefetchLocation, p, n));
    return where;
  };
  EXPECT_EQ(ask(m, 2 * kMiB), cudaInvalidDeviceId) << "never prefetched";
  cudaMemLocation dev0{cudaMemLocationTypeDevice, 0};
  cudaMemLocation host{cudaMemLocationTypeHost, 0};
  EXPECT_CUDA(cudaMemPrefetchAsync(m, kMiB, dev0, 0, nullptr));
  EXPECT_EQ(ask(m, kMiB), 0);
  EXPECT_EQ(ask(m, 2 * kMiB), cudaInvalidDeviceId) << "half of it never prefetched";
  EXPECT_CUDA(cudaMemPrefetchAsync(bytes + kMiB, kMiB, host, 0, nullptr));
  EXPECT_EQ(ask(bytes + kMiB, kMiB), cudaCpuDeviceId);
  EXPECT_EQ(ask(m, 2 * kMiB), cudaInvalidDeviceId) << "its halves went to different places";
  EXPECT_CUDA(cudaMemPrefetchAsync(bytes + 4096, 2 * kMiB - 4096, dev0, 0, nullptr));
  EXPECT_EQ(ask(m, 2 * kMiB), 0) << "the last prefetch of each byte counts";
  int type = -9;
  EXPECT_CUDA(cudaMemRangeGetAttribute(&type, sizeof type, cudaMemRangeAttributeLastPrefetchLocationType, m, kMiB));
  EXPECT_EQ(type, cudaMemLocationTypeDevice);
  int where = 0;
  EXPECT_EQ(cudaMemRangeGetAttribute(&where, 8, cudaMemRangeAttributeLastPrefetchLocation, m, kMiB),
            cudaErrorInvalidValue);
  EXPECT_CUDA(cudaStreamSynchronize(nullptr));
  EXPECT_CUDA(cudaFree(m));
  void* again = nullptr;
  ASSERT_CUDA(cudaMallocManaged(&again, 2 * kMiB));
  EXPECT_EQ(ask(again, 2 * kMiB), cudaInvalidDeviceId) << "a new allocation was never prefetched";
  EXPECT_CUDA(cudaFree(again));
  (void)cudaGetLastError();
}

TEST(EmulatorMemory, PrefetchAndAdvise)
{
  void* m = nullptr;
  ASSERT_CUDA(cudaMallocManaged(&m, kMiB));
  cudaMemLocation dev0{cudaMemLocationTypeDevice, 0};
  cudaMemLocation host{cudaMemLocationTypeHost, 0};
  EXPECT_CUDA(cudaMemPrefetchAsync(m, kMiB, dev0, 0, nullptr));
  EXPECT_CUDA(cudaMemPrefetchAsync(m, kMiB, host, 0, nullptr));
  EXPECT_CUDA(cudaMemAdvise(m, kMiB, cudaMemAdviseSetReadMostly, dev0));
  EXPECT_CUDA(cudaMemAdvise(m, kMiB, cudaMemAdviseSetPreferredLocation, dev0));
  EXPECT_EQ(cudaMemPrefetchAsync(m, 2 * kMiB, dev0, 0, nullptr), cudaErrorInvalidValue);  // past the end
  cudaMemLocation bad{cudaMemLocationTypeDevice, 9};
  EXPECT_EQ(cudaMemPrefetchAsync(m, kMiB, bad, 0, nullptr), cudaErrorInvalidDevice);
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, kMiB));
  EXPECT_EQ(cudaMemPrefetchAsync(d, kMiB, dev0, 0, nullptr), cudaErrorInvalidValue);  // not managed
  EXPECT_CUDA(cudaStreamSynchronize(nullptr));
  EXPECT_CUDA(cudaFree(d));
  EXPECT_CUDA(cudaFree(m));
  (void)cudaGetLastError();
}

}  // namespace

namespace {

cudaError_t texture_over(void* p, std::size_t bytes)
{
  cudaResourceDesc resource{};
  resource.resType                = cudaResourceTypeLinear;
  resource.res.linear.devPtr      = p;
  resource.res.linear.desc        = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  resource.res.linear.sizeInBytes = bytes;
  cudaTextureDesc texture{};
  cudaTextureObject_t object{};
  auto const e = cudaCreateTextureObject(&object, &resource, &texture, nullptr);
  if (e == cudaSuccess) { EXPECT_CUDA(cudaDestroyTextureObject(object)); }
  (void)cudaGetLastError();
  return e;
}

// A texture object over linear memory needs device memory at the device's texture alignment, as
// on the H200 (a 256-aligned address is refused), within one allocation.
TEST(EmulatorMemory, TextureObjectsNeedTheTextureAlignment)
{
  int alignment = 0;
  ASSERT_CUDA(cudaDeviceGetAttribute(&alignment, cudaDevAttrTextureAlignment, 0));
  EXPECT_EQ(alignment, 512);
  void* p = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 8192));
  EXPECT_EQ(texture_over(p, 4096), cudaSuccess);
  EXPECT_EQ(texture_over(static_cast<char*>(p) + 256, 4096), cudaErrorInvalidValue);
  EXPECT_EQ(texture_over(static_cast<char*>(p) + 512, 4096), cudaSuccess);
  EXPECT_EQ(texture_over(p, 8192 + 512), cudaErrorInvalidValue) << "beyond the allocation";
  std::vector<char> host(8192);
  EXPECT_EQ(texture_over(host.data(), 4096), cudaErrorInvalidValue) << "host memory";
  EXPECT_CUDA(cudaFree(p));
}

}  // namespace
