// SPDX-License-Identifier: Apache-2.0
// What the conformance suite cannot see of the two managed-memory resources: where their memory
// lives and what the driver says about it.
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

TEST(CudaAsyncManagedMemoryResource, AllocatesManagedMemoryFromTheDefaultManagedPool)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  rmm::mr::cuda_async_managed_memory_resource mr;
  cudaMemPool_t expected{};
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id   = 0;
  RMM_CUDA_TRY(cudaMemGetDefaultMemPool(&expected, &location, cudaMemAllocationTypeManaged));
  EXPECT_EQ(mr.pool_handle(), expected);
  cudaMemPool_t device_pool{};
  RMM_CUDA_TRY(cudaDeviceGetDefaultMemPool(&device_pool, 0));
  EXPECT_NE(mr.pool_handle(), device_pool) << "the managed pool is not the device-memory pool";

  rmm::cuda_stream stream;
  auto* ptr = static_cast<unsigned char*>(mr.allocate(stream, 4096));
  cudaPointerAttributes attributes{};
  RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, ptr));
  EXPECT_EQ(attributes.type, cudaMemoryTypeManaged);
  RMM_CUDA_TRY(cudaMemsetAsync(ptr, 0x5A, 4096, stream.value()));
  stream.synchronize();
  EXPECT_EQ(ptr[4095], 0x5A) << "the host reads what the device wrote";
  ptr[0] = 0x11;  // and writes it
  std::vector<unsigned char> copy(1);
  RMM_CUDA_TRY(cudaMemcpy(copy.data(), ptr, 1, cudaMemcpyDefault));
  EXPECT_EQ(copy[0], 0x11);
  mr.deallocate(stream, ptr, 4096);
  stream.synchronize();
}

TEST(CudaAsyncManagedMemoryResource, EqualToAnotherOverTheSamePoolOnly)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  rmm::mr::cuda_async_managed_memory_resource first;
  rmm::mr::cuda_async_managed_memory_resource second;
  rmm::mr::cuda_async_view_memory_resource view{first.pool_handle()};
  EXPECT_TRUE(first.is_equal(second));
  EXPECT_FALSE(first.is_equal(view)) << "a view frees to the pool but is another type";
  // The handles of CCCL see the same equality.
  rmm::device_async_resource_ref a{first};
  rmm::device_async_resource_ref b{second};
  EXPECT_TRUE(a == b);
}

TEST(SamHeadroomMemoryResource, ConstructsExactlyWhenTheDeviceHasPageableMemoryAccess)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  if (!rmm::mr::is_system_memory_supported(rmm::cuda_device_id{0})) {
    try {
      rmm::mr::sam_headroom_memory_resource mr{1U << 20U};
      FAIL() << "constructed without pageable memory access";
    } catch (rmm::logic_error const& e) {
      EXPECT_NE(std::string{e.what()}.find("cudaDevAttrPageableMemoryAccess = 0"), std::string::npos) << e.what();
    }
    return;
  }
  rmm::mr::sam_headroom_memory_resource mr{1U << 20U};
  EXPECT_EQ(mr.headroom(), std::size_t{1} << 20U);
  auto* ptr = static_cast<char*>(mr.allocate_sync(1 << 16));
  std::memset(ptr, 7, 1 << 16);  // host memory
  EXPECT_EQ(ptr[(1 << 16) - 1], 7);
  mr.deallocate_sync(ptr, 1 << 16);
  EXPECT_TRUE(mr.is_equal(rmm::mr::sam_headroom_memory_resource{1U << 20U})) << "the same headroom places alike";
  EXPECT_FALSE(mr.is_equal(rmm::mr::sam_headroom_memory_resource{0})) << "another headroom places otherwise, as RMM";
}

// A headroom larger than the device places the whole allocation on the host; advice must succeed
// for both placements, or the allocation is given back and the error raised.
TEST(SamHeadroomMemoryResource, AHeadroomBeyondTheDevicePlacesEverythingOnTheHost)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  if (!rmm::mr::is_system_memory_supported(rmm::cuda_device_id{0})) {
    EXPECT_THROW(rmm::mr::sam_headroom_memory_resource{0}, rmm::logic_error);
    return;
  }
  auto const total = rmm::available_device_memory().second;
  rmm::mr::sam_headroom_memory_resource all_host{total * 2};
  rmm::mr::sam_headroom_memory_resource none{0};
  for (auto* mr : {&all_host, &none}) {
    auto* ptr = static_cast<char*>(mr->allocate_sync(3 << 20));
    RMM_CUDA_TRY(cudaMemset(ptr, 1, 3 << 20));
    RMM_CUDA_TRY(cudaDeviceSynchronize());
    EXPECT_EQ(ptr[(3 << 20) - 1], 1);
    mr->deallocate_sync(ptr, 3 << 20);
  }
}

}  // namespace
