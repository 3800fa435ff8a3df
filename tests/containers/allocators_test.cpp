// SPDX-License-Identifier: Apache-2.0
// polymorphic_allocator, stream_allocator_adaptor, thrust_allocator and the policies built on it:
// where their memory comes from, on which stream, and how they rebind and compare. No kernels.

#include "device_memory.hpp"
#include "device_recording_resource.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/mr/detail/resource_cast.hpp>

#include <gtest/gtest.h>
#include <thrust/device_ptr.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

namespace {

using rmm::test::device_recording_resource;

class Allocators : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  rmm::cuda_stream stream_;
};

// ---- polymorphic_allocator ----------------------------------------------------------------------

TEST_F(Allocators, PolymorphicAllocatorUsesItsResourceOnTheGivenStream)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 1 << 20};
  rmm::mr::polymorphic_allocator<std::int64_t> alloc{pool};
  EXPECT_TRUE(alloc.get_upstream_resource() == rmm::device_async_resource_ref{pool});
  std::int64_t* p = alloc.allocate(100, stream_);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pool.statistics().allocated_bytes, 1024U);  // 800 bytes, rounded to 256
  rmm::test::write_tag(p, 800, 0x5A, stream_);
  EXPECT_TRUE(rmm::test::has_tag(p, 800, 0x5A, stream_));
  alloc.deallocate(p, 100, stream_);
  EXPECT_EQ(pool.statistics().allocated_bytes, 0U);
}

TEST_F(Allocators, PolymorphicAllocatorDefaultsToTheCurrentResource)
{
  rmm::mr::polymorphic_allocator<int> alloc;
  EXPECT_TRUE(alloc.get_upstream_resource() == rmm::mr::get_current_device_resource_ref());
  EXPECT_EQ(alloc.device().value(), 0);
  int* p = alloc.allocate(10, stream_);
  alloc.deallocate(p, 10, stream_);
}

TEST_F(Allocators, PolymorphicAllocatorRebindsAndCompares)
{
  device_recording_resource a;
  device_recording_resource b;
  rmm::mr::polymorphic_allocator<int> ints{a};
  rmm::mr::polymorphic_allocator<double> doubles{ints};
  EXPECT_TRUE(doubles.get_upstream_resource() == ints.get_upstream_resource());
  EXPECT_TRUE(ints == doubles);
  EXPECT_FALSE(ints == rmm::mr::polymorphic_allocator<int>{b});
  EXPECT_TRUE(ints != rmm::mr::polymorphic_allocator<int>{b});
  double* p = doubles.allocate(3, stream_);
  doubles.deallocate(p, 3, stream_);
  ASSERT_EQ(a.events().size(), 2U);
  EXPECT_EQ(a.events()[0].bytes, 3 * sizeof(double));
  EXPECT_EQ(b.events().size(), 0U);
}

TEST_F(Allocators, PolymorphicAllocatorRejectsACountThatOverflows)
{
  rmm::mr::polymorphic_allocator<std::int64_t> alloc;
  EXPECT_THROW((void)alloc.allocate(std::numeric_limits<std::size_t>::max() / 4, stream_), rmm::invalid_argument);
}

// ---- stream_allocator_adaptor -------------------------------------------------------------------

TEST_F(Allocators, StreamAllocatorAdaptorForwardsOnItsStream)
{
  device_recording_resource recorder;
  rmm::mr::polymorphic_allocator<int> stream_alloc{recorder};
  auto adapted = rmm::mr::stream_allocator_adaptor(stream_alloc, stream_);
  static_assert(std::is_same_v<decltype(adapted)::value_type, int>);
  EXPECT_EQ(adapted.stream(), stream_.view());
  EXPECT_TRUE(adapted.underlying_allocator() == stream_alloc);

  using traits = std::allocator_traits<decltype(adapted)>;  // the standard Allocator interface
  int* p       = traits::allocate(adapted, 100);
  traits::deallocate(adapted, p, 100);
  ASSERT_EQ(recorder.events().size(), 2U);
  EXPECT_EQ(recorder.events()[0].bytes, 100 * sizeof(int));
  EXPECT_EQ(recorder.events()[1].bytes, 100 * sizeof(int));
}

TEST_F(Allocators, StreamAllocatorAdaptorRebindsKeepingStreamAndResource)
{
  device_recording_resource recorder;
  auto adapted    = rmm::mr::make_stream_allocator_adaptor(rmm::mr::polymorphic_allocator<int>{recorder}, stream_);
  using rebound_t = std::allocator_traits<decltype(adapted)>::rebind_alloc<double>;
  static_assert(std::is_same_v<rebound_t, rmm::mr::stream_allocator_adaptor<rmm::mr::polymorphic_allocator<double>>>);
  rebound_t rebound{adapted};
  EXPECT_EQ(rebound.stream(), stream_.view());
  EXPECT_TRUE(rebound == adapted);
  double* p = rebound.allocate(2);
  rebound.deallocate(p, 2);
  EXPECT_EQ(recorder.allocations(), 1U);
  EXPECT_EQ(recorder.deallocations(), 1U);

  rmm::cuda_stream other;
  EXPECT_FALSE(adapted == rmm::mr::make_stream_allocator_adaptor(adapted.underlying_allocator(), other));
}

// ---- thrust_allocator ---------------------------------------------------------------------------

TEST_F(Allocators, ThrustAllocatorAllocatesDevicePointersFromItsResource)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 1 << 20};
  rmm::mr::thrust_allocator<float> alloc{stream_, pool};
  EXPECT_EQ(alloc.stream(), stream_.view());
  EXPECT_TRUE(alloc.memory_resource() == rmm::device_async_resource_ref{pool});
  thrust::device_ptr<float> p = alloc.allocate(1000);
  ASSERT_NE(p.get(), nullptr);
  EXPECT_EQ(pool.statistics().allocated_bytes, 4096U);
  rmm::test::write_tag(p.get(), 4000, 0x11, stream_);
  EXPECT_TRUE(rmm::test::has_tag(p.get(), 4000, 0x11, stream_));
  alloc.deallocate(p, 1000);
  EXPECT_EQ(pool.statistics().allocated_bytes, 0U);
}

TEST_F(Allocators, ThrustAllocatorDefaultsToTheCurrentResourceAndDefaultStream)
{
  rmm::mr::thrust_allocator<int> alloc;
  EXPECT_EQ(alloc.stream(), rmm::cuda_stream_default);
  EXPECT_TRUE(alloc.memory_resource() == rmm::mr::get_current_device_resource_ref());
  EXPECT_EQ(alloc.device().value(), 0);
  rmm::mr::thrust_allocator<int> on_stream{stream_};
  EXPECT_EQ(on_stream.stream(), stream_.view());
  EXPECT_TRUE(on_stream.memory_resource() == rmm::mr::get_current_device_resource_ref());
}

TEST_F(Allocators, ThrustAllocatorRebindsAndCompares)
{
  device_recording_resource a;
  device_recording_resource b;
  rmm::mr::thrust_allocator<int> ints{stream_, a};
  using rebound_t = rmm::mr::thrust_allocator<int>::rebind<char>::other;
  static_assert(std::is_same_v<rebound_t, rmm::mr::thrust_allocator<char>>);
  rebound_t chars{ints};
  EXPECT_EQ(chars.stream(), stream_.view());
  EXPECT_TRUE(chars.memory_resource() == ints.memory_resource());
  EXPECT_EQ(chars.device(), ints.device());
  EXPECT_TRUE(ints == rmm::mr::thrust_allocator<int>(stream_, a));
  EXPECT_FALSE(ints == rmm::mr::thrust_allocator<int>(stream_, b));
  EXPECT_TRUE(ints != rmm::mr::thrust_allocator<int>(stream_, b));
  auto p = chars.allocate(5);
  chars.deallocate(p, 5);
  ASSERT_EQ(a.events().size(), 2U);
  EXPECT_EQ(a.events()[0].bytes, 5U);
}

TEST_F(Allocators, ThrustAllocatorSharesOwnershipOfAResourcePassedByValue)
{
  auto alloc = std::make_unique<rmm::mr::thrust_allocator<int>>(
    stream_, rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 1 << 20});
  auto p = alloc->allocate(256);  // the pool lives on inside the allocator
  EXPECT_NE(rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(alloc->memory_resource()), nullptr);
  alloc->deallocate(p, 256);
}

// ---- exec_policy --------------------------------------------------------------------------------

TEST_F(Allocators, ExecPolicyCarriesTheStreamAndAnAllocatorOnIt)
{
  device_recording_resource recorder;
  rmm::exec_policy policy{stream_, recorder};
  EXPECT_EQ(thrust::cuda_cub::stream(policy), stream_.value());
  auto& alloc = policy.get_allocator();
  EXPECT_EQ(alloc.stream(), stream_.view());
  EXPECT_TRUE(alloc.memory_resource() == rmm::device_async_resource_ref{recorder});
  // What Thrust does for temporary storage: allocate through the policy's allocator.
  auto p = alloc.allocate(4096);
  alloc.deallocate(p, 4096);
  EXPECT_EQ(recorder.allocations(), 1U);

  rmm::exec_policy_nosync nosync{stream_, recorder};
  EXPECT_EQ(thrust::cuda_cub::stream(nosync), stream_.value());
  EXPECT_TRUE(nosync.get_allocator().memory_resource() == rmm::device_async_resource_ref{recorder});

  rmm::exec_policy by_default;
  EXPECT_EQ(thrust::cuda_cub::stream(by_default), rmm::cuda_stream_default.value());
  EXPECT_TRUE(by_default.get_allocator().memory_resource() == rmm::mr::get_current_device_resource_ref());
}

}  // namespace
