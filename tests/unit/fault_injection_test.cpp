// SPDX-License-Identifier: Apache-2.0
// Failure paths, driven by the emulator's fault injection (RMM_EMU_FAIL_ALLOC_*): resources
// report the failure, keep working afterwards, and leak nothing. Emulator only.

#include "backend.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <rmm_emu/control.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rmm::test {
namespace {

using ::testing::HasSubstr;
constexpr std::size_t MiB = std::size_t{1} << 20;

long long live_allocations()
{
  auto fn = reinterpret_cast<rmm_emu_live_allocations_fn>(rmm_emu_symbol("rmm_emu_live_allocations"));
  return fn != nullptr ? fn(-1, RMM_EMU_KIND_ALL) : -1;
}

class FaultInjection : public ::testing::Test {
 protected:
  void SetUp() override
  {
    RMM_CUDA_TRY(cudaSetDevice(0));
    ASSERT_EQ(current_backend(), backend::emulator);
  }
  void TearDown() override
  {
    emulator_set("RMM_EMU_FAIL_ALLOC_NTH", "off");
    emulator_set("RMM_EMU_FAIL_ALLOC_ABOVE", "off");
  }
};

TEST_F(FaultInjection, FailedCudaMallocIsOutOfMemoryAndTheNextOneWorks)
{
  rmm::mr::cuda_memory_resource mr;
  emulator_set("RMM_EMU_FAIL_ALLOC_NTH", "1");
  try {
    (void)mr.allocate_sync(4096);
    FAIL() << "the injected failure did not surface";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_THAT(e.what(), HasSubstr("cuda_memory_resource (cudaMalloc) could not allocate 4.00 KiB"));
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  void* ptr = mr.allocate_sync(4096);
  mr.deallocate_sync(ptr, 4096);
}

TEST_F(FaultInjection, PoolFallsBackToTheExactSizeWhenItsGrowthStepFails)
{
  // Chunks from cudaMallocAsync (not contiguous growth): a 32 MiB step is refused, 1 MiB is not.
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_async_memory_resource{}, 0};
  emulator_set("RMM_EMU_FAIL_ALLOC_ABOVE", "16MiB");
  void* ptr = pool.allocate(rmm::cuda_stream_view{}, MiB);
  EXPECT_EQ(pool.pool_size(), MiB);
  pool.deallocate(rmm::cuda_stream_view{}, ptr, MiB);
  try {
    (void)pool.allocate(rmm::cuda_stream_view{}, 20 * MiB);
    FAIL() << "20 MiB grew past the injected limit";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_THAT(e.what(), HasSubstr("pool_memory_resource could not allocate 20.00 MiB"));
    EXPECT_THAT(e.what(), HasSubstr("growing failed: CUDA error (failed to allocate 20971520 bytes): "
                                    "cuda_async_memory_resource (cudaMallocFromPoolAsync)"));
  }
  EXPECT_EQ(pool.pool_size(), MiB) << "a failed growth leaves the pool as it was";
}

TEST_F(FaultInjection, ContiguousPoolGrowthFailureIsReportedAndHarmless)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0};
  ASSERT_TRUE(pool.grows_contiguously()) << "the emulator emulates virtual memory management";
  void* held = pool.allocate(rmm::cuda_stream_view{}, 64 * MiB);
  ASSERT_EQ(pool.pool_size(), 64 * MiB);
  // The first mapping (a step of a sixteenth of the pool: 4 MiB) fails; the pool retries with what
  // the request needs.
  emulator_set("RMM_EMU_FAIL_ALLOC_NTH", "1");
  void* ptr = pool.allocate(rmm::cuda_stream_view{}, MiB);
  EXPECT_EQ(pool.pool_size(), 66 * MiB) << "one more 2 MiB granule";
  pool.deallocate(rmm::cuda_stream_view{}, ptr, MiB);
  // Nothing can be mapped at all: the error says so.
  emulator_set("RMM_EMU_FAIL_ALLOC_ABOVE", "1MiB");
  try {
    (void)pool.allocate(rmm::cuda_stream_view{}, 8 * MiB);
    FAIL() << "grew although every mapping fails";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_THAT(e.what(), HasSubstr("growing failed: could not allocate 6.00 MiB (6291456 bytes) of device memory: "
                                    "cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY"));
  }
  // Before giving up, the pool gave the free granule back to the device, where the request would
  // have fit beside what is live; what is live is untouched.
  EXPECT_EQ(pool.pool_size(), 64 * MiB);
  emulator_set("RMM_EMU_FAIL_ALLOC_ABOVE", "off");
  ptr = pool.allocate(rmm::cuda_stream_view{}, 8 * MiB);
  EXPECT_GE(pool.pool_size(), 72 * MiB);
  pool.deallocate(rmm::cuda_stream_view{}, ptr, 8 * MiB);
  pool.deallocate(rmm::cuda_stream_view{}, held, 64 * MiB);
}

TEST_F(FaultInjection, DeviceBufferThatFailsToAllocateLeaksNothing)
{
  rmm::mr::cuda_memory_resource mr;
  auto const before = live_allocations();
  emulator_set("RMM_EMU_FAIL_ALLOC_NTH", "1");
  EXPECT_THROW((rmm::device_buffer{1024, rmm::cuda_stream_view{}, mr}), rmm::out_of_memory);
  EXPECT_EQ(live_allocations(), before);
}

TEST_F(FaultInjection, AsyncResourceWhoseInitialReservationFailsThrows)
{
  emulator_set("RMM_EMU_FAIL_ALLOC_NTH", "1");
  EXPECT_THROW((rmm::mr::cuda_async_memory_resource{64 * MiB}), rmm::out_of_memory);
}

}  // namespace
}  // namespace rmm::test
