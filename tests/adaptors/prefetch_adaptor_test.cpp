// SPDX-License-Identifier: Apache-2.0
// prefetch_resource_adaptor: managed allocations are prefetched; other memory passes untouched.
#include "device_memory.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace {

using rmm::mr::prefetch_resource_adaptor;

TEST(PrefetchAdaptor, ManagedMemoryIsPrefetchedToTheCurrentDeviceAndUsable)
{
  rmm::mr::managed_memory_resource managed;
  prefetch_resource_adaptor mr{rmm::mr::pool_memory_resource{managed, 0}};
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, 1 << 20);
  stream.synchronize();
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, p), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeManaged);
  rmm::test::write_tag(p, 1 << 20, 0x42, stream);
  EXPECT_TRUE(rmm::test::has_tag(p, 1 << 20, 0x42, stream));
  mr.deallocate(stream, p, 1 << 20);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(PrefetchAdaptor, DeviceMemoryIsNotPrefetchableAndLeavesNoErrorBehind)
{
  rmm::mr::cuda_memory_resource cuda;
  prefetch_resource_adaptor mr{cuda};
  void* p = mr.allocate_sync(1 << 20);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the refused prefetch must not be left for the program to find";
  mr.deallocate_sync(p, 1 << 20);
  EXPECT_TRUE(mr.get_upstream_resource() == rmm::device_async_resource_ref{cuda});
}

TEST(PrefetchAdaptor, CopiesAreEqualAndSeparateAdaptorsAreNot)
{
  rmm::mr::cuda_memory_resource cuda;
  prefetch_resource_adaptor first{cuda};
  prefetch_resource_adaptor const copy = first;
  prefetch_resource_adaptor second{cuda};
  EXPECT_TRUE(first == copy);
  EXPECT_FALSE(first == second) << "built separately over the same upstream";
  EXPECT_FALSE(rmm::device_async_resource_ref{first} == rmm::device_async_resource_ref{second});
}

}  // namespace
