// SPDX-License-Identifier: Apache-2.0
// Stream-ordered pools: the H200's accounting, stream-ordered reuse, pool lifetime, attributes.
#include "emu_test.hpp"

#include <cuda.h>

#include <cstdint>
#include <thread>

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

std::uint64_t attribute(cudaMemPool_t pool, cudaMemPoolAttr attr)
{
  std::uint64_t v = 0;
  EXPECT_CUDA(cudaMemPoolGetAttribute(pool, attr, &v));
  return v;
}

cudaMemPoolProps device_props(int device, cudaMemAllocationHandleType handles = cudaMemHandleTypeNone)
{
  cudaMemPoolProps props{};
  props.allocType     = cudaMemAllocationTypePinned;
  props.handleTypes   = handles;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id   = device;
  return props;
}

void CUDART_CB sleep_300ms(void*) { emu::sleep_ms(300); }

TEST(EmulatorPools, AccountingMatchesTheH200)
{
  cudaMemPool_t pool = nullptr;
  auto props         = device_props(0);
  ASSERT_CUDA(cudaMemPoolCreate(&pool, &props));
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&a, 1, pool, nullptr));
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemCurrent), 32 * kMiB);
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrUsedMemCurrent), 1u);
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReleaseThreshold), 0u);
  ASSERT_CUDA(cudaMallocFromPoolAsync(&b, 1, pool, nullptr));
  EXPECT_EQ(static_cast<char*>(b) - static_cast<char*>(a), 512);
  ASSERT_CUDA(cudaFreeAsync(a, nullptr));
  ASSERT_CUDA(cudaFreeAsync(b, nullptr));
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemCurrent), 32 * kMiB);  // not synchronized yet
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrUsedMemCurrent), 0u);
  ASSERT_CUDA(cudaStreamSynchronize(nullptr));
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemCurrent), 0u);  // threshold 0: given back
  ASSERT_CUDA(cudaMallocFromPoolAsync(&a, 64 * kMiB, pool, nullptr));
  ASSERT_CUDA(cudaFreeAsync(a, nullptr));
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemCurrent), 64 * kMiB);
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemHigh), 64 * kMiB);
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrUsedMemHigh), 64 * kMiB);
  ASSERT_CUDA(cudaStreamSynchronize(nullptr));
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemCurrent), 0u);
  // Chunks are at least 32 MiB and multiples of 2 MiB.
  ASSERT_CUDA(cudaMallocFromPoolAsync(&a, 33 * kMiB + 1, pool, nullptr));
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemCurrent), 34 * kMiB);
  ASSERT_CUDA(cudaFreeAsync(a, nullptr));
  EXPECT_CUDA(cudaMemPoolDestroy(pool));
  EXPECT_CUDA(cudaDeviceSynchronize());
}

TEST(EmulatorPools, ReleaseThresholdAndTrim)
{
  cudaMemPool_t pool = nullptr;
  auto props         = device_props(0);
  ASSERT_CUDA(cudaMemPoolCreate(&pool, &props));
  std::uint64_t threshold = UINT64_MAX;
  ASSERT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  void* a = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&a, 100 * kMiB, pool, nullptr));
  ASSERT_CUDA(cudaFreeAsync(a, nullptr));
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemCurrent), 100 * kMiB);  // kept
  void* again = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&again, 50 * kMiB, pool, nullptr));
  EXPECT_EQ(again, a);  // served from the kept chunk
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemCurrent), 100 * kMiB);
  ASSERT_CUDA(cudaFreeAsync(again, nullptr));
  ASSERT_CUDA(cudaStreamSynchronize(nullptr));
  ASSERT_CUDA(cudaMemPoolTrimTo(pool, 0));
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemCurrent), 0u);
  // The high-water marks reset to the current value when set to zero; other values are refused.
  std::uint64_t zero = 0;
  std::uint64_t one  = 1;
  EXPECT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrUsedMemHigh), 0u);
  EXPECT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &one), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &zero), cudaErrorInvalidValue);
  int reuse = -1;
  ASSERT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseFollowEventDependencies, &reuse));
  EXPECT_EQ(reuse, 1);
  reuse = 0;
  EXPECT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
  EXPECT_CUDA(cudaMemPoolDestroy(pool));
  (void)cudaGetLastError();
}

TEST(EmulatorPools, FreedBlockIsNotHandedToAnotherStreamEarly)
{
  cudaMemPool_t pool = nullptr;
  auto props         = device_props(0);
  ASSERT_CUDA(cudaMemPoolCreate(&pool, &props));
  cudaStream_t a = nullptr;
  cudaStream_t b = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  void* p = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&p, kMiB, pool, a));
  ASSERT_CUDA(cudaLaunchHostFunc(a, sleep_300ms, nullptr));  // "a kernel still using p"
  ASSERT_CUDA(cudaFreeAsync(p, a));
  void* q = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&q, kMiB, pool, b));
  EXPECT_NE(q, p);  // stream a has not reached the free: b must not get the block
  void* r = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&r, kMiB, pool, a));
  EXPECT_EQ(r, p);  // a itself may reuse it: its own order protects the block
  ASSERT_CUDA(cudaFreeAsync(r, a));
  ASSERT_CUDA(cudaStreamSynchronize(a));
  void* s = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&s, kMiB, pool, b));
  EXPECT_EQ(s, p);  // a reached the free: now anyone may have it
  ASSERT_CUDA(cudaFreeAsync(q, b));
  ASSERT_CUDA(cudaFreeAsync(s, b));
  ASSERT_CUDA(cudaStreamSynchronize(b));
  EXPECT_CUDA(cudaMemPoolDestroy(pool));
  EXPECT_CUDA(cudaStreamDestroy(a));
  EXPECT_CUDA(cudaStreamDestroy(b));
}

TEST(EmulatorPools, ReusedMemoryReadsAsPoisonNotStaleData)
{
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  void* p = nullptr;
  ASSERT_CUDA(cudaMallocAsync(&p, 4096, s));
  ASSERT_CUDA(cudaMemsetAsync(p, 0x11, 4096, s));
  ASSERT_CUDA(cudaLaunchHostFunc(s, sleep_300ms, nullptr));  // keeps the free below pending
  ASSERT_CUDA(cudaFreeAsync(p, s));
  void* q = nullptr;
  ASSERT_CUDA(cudaMallocAsync(&q, 4096, s));
  ASSERT_EQ(q, p);  // reused on the freeing stream before the free ran
  unsigned char host[16]{};
  ASSERT_CUDA(cudaMemcpyAsync(host, q, sizeof(host), cudaMemcpyDeviceToHost, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(host[0], 0xDD);  // the free poisoned it in stream order: stale 0x11 would be a bug
  ASSERT_CUDA(cudaFreeAsync(q, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  ASSERT_CUDA(cudaMallocAsync(&q, 4096, s));  // a block whose free completed: fresh poison
  ASSERT_CUDA(cudaMemcpyAsync(host, q, sizeof(host), cudaMemcpyDeviceToHost, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(host[0], 0xCD);
  ASSERT_CUDA(cudaFreeAsync(q, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_CUDA(cudaStreamDestroy(s));
}

TEST(EmulatorPools, SynchronousFreeAndDestroyWithLiveAllocations)
{
  cudaMemPool_t pool = nullptr;
  auto props         = device_props(0);
  ASSERT_CUDA(cudaMemPoolCreate(&pool, &props));
  void* p = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&p, 4096, pool, nullptr));
  EXPECT_CUDA(cudaFree(p));  // cudaFree of stream-ordered memory is allowed and synchronous
  EXPECT_EQ(cudaFreeAsync(p, nullptr), cudaErrorInvalidValue);  // already gone
  ASSERT_CUDA(cudaMallocFromPoolAsync(&p, 4096, pool, nullptr));
  auto const live = emu::control().live_allocations(0, RMM_EMU_KIND_ASYNC);
  EXPECT_CUDA(cudaMemPoolDestroy(pool));
  void* q = nullptr;
  EXPECT_EQ(cudaMallocFromPoolAsync(&q, 16, pool, nullptr), cudaErrorInvalidValue);  // handle is dead
  EXPECT_CUDA(cudaFreeAsync(p, nullptr));                                            // the allocation is not
  EXPECT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(emu::control().live_allocations(0, RMM_EMU_KIND_ASYNC), live - 1);
  cudaMemPool_t def = nullptr;
  ASSERT_CUDA(cudaDeviceGetDefaultMemPool(&def, 0));
  EXPECT_EQ(cudaMemPoolDestroy(def), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(EmulatorPools, CreationRules)
{
  cudaMemPool_t pool = nullptr;
  auto props         = device_props(0, cudaMemHandleTypePosixFileDescriptor);
  ASSERT_CUDA(cudaMemPoolCreate(&pool, &props));
  int fd = -1;
  EXPECT_EQ(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0),
            cudaErrorNotSupported);
  EXPECT_CUDA(cudaMemPoolDestroy(pool));
  props = device_props(0, cudaMemHandleTypeFabric);
  ASSERT_CUDA(cudaMemPoolCreate(&pool, &props));
  EXPECT_CUDA(cudaMemPoolDestroy(pool));
  props = device_props(5);
  EXPECT_EQ(cudaMemPoolCreate(&pool, &props), cudaErrorInvalidValue);
  props           = device_props(0);
  props.allocType = cudaMemAllocationTypeInvalid;
  EXPECT_EQ(cudaMemPoolCreate(&pool, &props), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(EmulatorPools, DefaultAndCurrentPools)
{
  cudaMemPool_t def = nullptr;
  cudaMemPool_t cur = nullptr;
  ASSERT_CUDA(cudaDeviceGetDefaultMemPool(&def, 0));
  ASSERT_CUDA(cudaDeviceGetMemPool(&cur, 0));
  EXPECT_EQ(cur, def);
  EXPECT_EQ(attribute(def, cudaMemPoolAttrReleaseThreshold), 0u);
  cudaMemPool_t mine = nullptr;
  auto props         = device_props(0);
  ASSERT_CUDA(cudaMemPoolCreate(&mine, &props));
  ASSERT_CUDA(cudaDeviceSetMemPool(0, mine));
  void* p = nullptr;
  ASSERT_CUDA(cudaMallocAsync(&p, 1000, nullptr));  // from the current pool
  EXPECT_EQ(attribute(mine, cudaMemPoolAttrUsedMemCurrent), 1000u);
  using attr_fn = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
  auto get      = emu::driver_entry<attr_fn>("cuPointerGetAttribute", 4000);
  ASSERT_NE(get, nullptr);
  CUmemoryPool owner = nullptr;
  ASSERT_EQ(get(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, reinterpret_cast<CUdeviceptr>(p)), CUDA_SUCCESS);
  EXPECT_EQ(owner, mine);
  EXPECT_CUDA(cudaFreeAsync(p, nullptr));
  cudaMemPool_t other = nullptr;
  ASSERT_CUDA(cudaDeviceGetDefaultMemPool(&other, 1));
  EXPECT_EQ(cudaDeviceSetMemPool(0, other), cudaErrorInvalidValue);  // a pool of another device
  EXPECT_CUDA(cudaMemPoolDestroy(mine));                             // the current pool goes back to the default
  ASSERT_CUDA(cudaDeviceGetMemPool(&cur, 0));
  EXPECT_EQ(cur, def);
  EXPECT_CUDA(cudaDeviceSynchronize());
  (void)cudaGetLastError();
}

TEST(EmulatorPools, AllocationsFollowTheStreamsDevice)
{
  ASSERT_CUDA(cudaSetDevice(1));
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  ASSERT_CUDA(cudaSetDevice(0));
  void* p = nullptr;
  ASSERT_CUDA(cudaMallocAsync(&p, 4096, s));
  cudaPointerAttributes attr{};
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, p));
  EXPECT_EQ(attr.device, 1);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_CUDA(cudaFreeAsync(p, s));
  EXPECT_CUDA(cudaStreamSynchronize(s));
  EXPECT_CUDA(cudaStreamDestroy(s));
  EXPECT_EQ(cudaMallocAsync(&p, std::size_t{1} << 50, nullptr), cudaErrorMemoryAllocation);
  (void)cudaGetLastError();
}

TEST(EmulatorPools, Access)
{
  cudaMemPool_t pool = nullptr;
  auto props         = device_props(0);
  ASSERT_CUDA(cudaMemPoolCreate(&pool, &props));
  cudaMemLocation dev1{cudaMemLocationTypeDevice, 1};
  cudaMemLocation dev0{cudaMemLocationTypeDevice, 0};
  cudaMemAccessFlags flags{};
  ASSERT_CUDA(cudaMemPoolGetAccess(&flags, pool, &dev1));
  EXPECT_EQ(flags, cudaMemAccessFlagsProtNone);
  ASSERT_CUDA(cudaMemPoolGetAccess(&flags, pool, &dev0));
  EXPECT_EQ(flags, cudaMemAccessFlagsProtReadWrite);
  cudaMemAccessDesc desc{dev1, cudaMemAccessFlagsProtReadWrite};
  ASSERT_CUDA(cudaMemPoolSetAccess(pool, &desc, 1));
  ASSERT_CUDA(cudaMemPoolGetAccess(&flags, pool, &dev1));
  EXPECT_EQ(flags, cudaMemAccessFlagsProtReadWrite);
  cudaMemAccessDesc revoke_owner{dev0, cudaMemAccessFlagsProtNone};
  EXPECT_EQ(cudaMemPoolSetAccess(pool, &revoke_owner, 1), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaMemPoolDestroy(pool));
  (void)cudaGetLastError();
}

TEST(EmulatorPools, ManyThreadsShareAPool)
{
  cudaMemPool_t pool = nullptr;
  auto props         = device_props(0);
  ASSERT_CUDA(cudaMemPoolCreate(&pool, &props));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([pool, t] {
      cudaStream_t s = nullptr;
      EXPECT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      for (int i = 0; i < 200; ++i) {
        void* p                = nullptr;
        std::size_t const size = static_cast<std::size_t>((t * 131 + i * 17) % 4096 + 1) * 64;
        EXPECT_CUDA(cudaMallocFromPoolAsync(&p, size, pool, s));
        EXPECT_CUDA(cudaMemsetAsync(p, t, size, s));
        EXPECT_CUDA(cudaFreeAsync(p, s));
      }
      EXPECT_CUDA(cudaStreamSynchronize(s));
      EXPECT_CUDA(cudaStreamDestroy(s));
    });
  }
  for (auto& th : threads) { th.join(); }
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrUsedMemCurrent), 0u);
  EXPECT_CUDA(cudaMemPoolDestroy(pool));
}

}  // namespace

// As cuMemBatchDecompressAsync's documentation lists: cudaMalloc memory and blocks of a pool made
// for decompression can be used by the engine; blocks of other pools and managed memory cannot.
TEST(EmulatorPools, HardwareDecompressCapability)
{
  using attr_fn = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
  auto get      = emu::driver_entry<attr_fn>("cuPointerGetAttribute", 4000);
  ASSERT_NE(get, nullptr);
  auto capable = [&](void* p) {
    bool value = false;
    EXPECT_EQ(get(&value, CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, reinterpret_cast<CUdeviceptr>(p)),
              CUDA_SUCCESS);
    return value;
  };
  void* plain = nullptr;
  ASSERT_CUDA(cudaMalloc(&plain, 1000));
  EXPECT_TRUE(capable(plain));
  EXPECT_CUDA(cudaFree(plain));

  void* from_default = nullptr;
  ASSERT_CUDA(cudaMallocAsync(&from_default, 1000, nullptr));
  EXPECT_FALSE(capable(from_default));
  EXPECT_CUDA(cudaFreeAsync(from_default, nullptr));

  auto props         = device_props(0);
  props.usage        = cudaMemPoolCreateUsageHwDecompress;
  cudaMemPool_t pool = nullptr;
  ASSERT_CUDA(cudaMemPoolCreate(&pool, &props));
  void* from_pool = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&from_pool, 1000, pool, nullptr));
  EXPECT_TRUE(capable(from_pool));
  EXPECT_CUDA(cudaFreeAsync(from_pool, nullptr));
  EXPECT_CUDA(cudaMemPoolDestroy(pool));

  void* managed = nullptr;
  ASSERT_CUDA(cudaMallocManaged(&managed, 1000));
  EXPECT_FALSE(capable(managed));
  EXPECT_CUDA(cudaFree(managed));
  EXPECT_CUDA(cudaDeviceSynchronize());
}
