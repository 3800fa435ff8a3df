// SPDX-License-Identifier: Apache-2.0
#include "backend.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/detail/resource_cast.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

using namespace rmm::mr;

class PerDeviceResource : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  void TearDown() override
  {
    for (int d = 0; d < rmm::test::device_count(); ++d) { (void)reset_per_device_resource(rmm::cuda_device_id{d}); }
    RMM_CUDA_TRY(cudaSetDevice(0));
  }
};

TEST_F(PerDeviceResource, InitialResourceIsCudaMemoryResource)
{
  EXPECT_NE(rmm::mr::detail::resource_cast<cuda_memory_resource>(get_current_device_resource_ref()), nullptr);
  EXPECT_NE(rmm::mr::detail::resource_cast<cuda_memory_resource>(get_current_device_resource()), nullptr);
  EXPECT_TRUE(get_current_device_resource_ref() ==
              rmm::device_async_resource_ref{
                *rmm::mr::detail::resource_cast<cuda_memory_resource>(get_current_device_resource())});
}

TEST_F(PerDeviceResource, SetReturnsThePreviousAndGetSeesTheNew)
{
  managed_memory_resource managed;
  auto previous = set_current_device_resource(managed);
  EXPECT_NE(rmm::mr::detail::resource_cast<cuda_memory_resource>(previous), nullptr);
  EXPECT_NE(rmm::mr::detail::resource_cast<managed_memory_resource>(get_current_device_resource_ref()), nullptr);
  void* ptr = get_current_device_resource_ref().allocate_sync(128, rmm::CUDA_ALLOCATION_ALIGNMENT);
  cudaPointerAttributes attributes{};
  RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, ptr));
  EXPECT_EQ(attributes.type, cudaMemoryTypeManaged);
  get_current_device_resource_ref().deallocate_sync(ptr, 128, rmm::CUDA_ALLOCATION_ALIGNMENT);
  auto replaced = set_current_device_resource(previous);
  EXPECT_NE(rmm::mr::detail::resource_cast<managed_memory_resource>(replaced), nullptr);
  EXPECT_NE(rmm::mr::detail::resource_cast<cuda_memory_resource>(get_current_device_resource_ref()), nullptr);
}

TEST_F(PerDeviceResource, TheTableOwnsWhatItIsGiven)
{
  // The seeds' pattern: a resource object set as current, then the local goes out of scope.
  {
    cuda_async_memory_resource pool{std::size_t{1} << 20};
    set_current_device_resource(pool);
  }
  auto ref  = get_current_device_resource_ref();
  void* ptr = ref.allocate(rmm::cuda_stream_view{}, 4096, rmm::CUDA_ALLOCATION_ALIGNMENT);
  ref.deallocate(rmm::cuda_stream_view{}, ptr, 4096, rmm::CUDA_ALLOCATION_ALIGNMENT);
  EXPECT_NE(rmm::mr::detail::resource_cast<cuda_async_memory_resource>(ref), nullptr);
}

TEST_F(PerDeviceResource, RefVariantsDoNotOwnAndKeepReturnedRefsValid)
{
  cuda_async_memory_resource pool;
  (void)set_current_device_resource(cuda_async_memory_resource{});  // owned by the table
  auto const previous_ref = set_current_device_resource_ref(pool);
  // The owned resource was replaced by a ref, yet the returned ref still works.
  auto previous = previous_ref;
  void* ptr     = previous.allocate_sync(256, rmm::CUDA_ALLOCATION_ALIGNMENT);
  previous.deallocate_sync(ptr, 256, rmm::CUDA_ALLOCATION_ALIGNMENT);
  EXPECT_TRUE(get_current_device_resource_ref() == rmm::device_async_resource_ref{pool});
  EXPECT_TRUE(get_current_device_resource() == rmm::mr::any_device_resource{pool}) << "a copy of the referenced one";
  auto const reset_from = reset_current_device_resource_ref();
  EXPECT_TRUE(reset_from == rmm::device_async_resource_ref{pool});
  EXPECT_NE(rmm::mr::detail::resource_cast<cuda_memory_resource>(get_current_device_resource_ref()), nullptr);
}

TEST_F(PerDeviceResource, ResetRestoresTheInitialResource)
{
  set_current_device_resource(managed_memory_resource{});
  auto previous = reset_current_device_resource();
  EXPECT_NE(rmm::mr::detail::resource_cast<managed_memory_resource>(previous), nullptr);
  EXPECT_NE(rmm::mr::detail::resource_cast<cuda_memory_resource>(get_current_device_resource_ref()), nullptr);
}

TEST_F(PerDeviceResource, MissingDeviceIsALogicError)
{
  EXPECT_THROW((void)get_per_device_resource_ref(rmm::cuda_device_id{-1}), rmm::logic_error);
  EXPECT_THROW((void)set_per_device_resource(rmm::cuda_device_id{rmm::test::device_count()}, cuda_memory_resource{}),
               rmm::logic_error);
}

TEST_F(PerDeviceResource, EachDeviceHasItsOwn)
{
  // The RMM documentation's loop: set device i, create its pool, make it the per-device resource.
  int const n = rmm::test::device_count();
  for (int i = 0; i < n; ++i) {
    RMM_CUDA_TRY(cudaSetDevice(i));
    auto initial_size = rmm::percent_of_free_device_memory(1);
    cuda_async_memory_resource pool{initial_size};
    set_per_device_resource(rmm::cuda_device_id{i}, pool);
  }
  for (int i = 0; i < n; ++i) {
    RMM_CUDA_TRY(cudaSetDevice(i));
    auto ref   = get_current_device_resource_ref();
    auto* pool = rmm::mr::detail::resource_cast<cuda_async_memory_resource>(ref);
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(pool->device().value(), i);
    EXPECT_TRUE(ref == get_per_device_resource_ref(rmm::cuda_device_id{i}));
    for (int j = 0; j < n; ++j) {
      if (j != i) { EXPECT_FALSE(ref == get_per_device_resource_ref(rmm::cuda_device_id{j})); }
    }
  }
}

TEST_F(PerDeviceResource, ConcurrentGetSetAndAllocate)
{
  managed_memory_resource managed;
  cuda_memory_resource cuda;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      RMM_CUDA_TRY(cudaSetDevice(0));
      for (int i = 0; i < 200; ++i) {
        if (t % 2 == 0) {
          // Writers swap between two resources that are both kept alive by the test.
          (void)set_current_device_resource_ref(i % 2 == 0 ? rmm::device_async_resource_ref{managed}
                                                           : rmm::device_async_resource_ref{cuda});
        } else {
          auto ref  = get_current_device_resource_ref();
          void* ptr = ref.allocate_sync(64, rmm::CUDA_ALLOCATION_ALIGNMENT);
          if (ptr == nullptr) { ++failures; }
          ref.deallocate_sync(ptr, 64, rmm::CUDA_ALLOCATION_ALIGNMENT);
        }
      }
    });
  }
  for (auto& t : threads) { t.join(); }
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
