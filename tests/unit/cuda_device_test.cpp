// SPDX-License-Identifier: Apache-2.0
#include "backend.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>

#include <gtest/gtest.h>

namespace {

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  void TearDown() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
};

TEST_F(CudaDevice, CountMatchesTheRuntime)
{
  int count{};
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(rmm::get_num_cuda_devices(), count);
  EXPECT_GE(count, 1);
}

TEST_F(CudaDevice, CurrentDeviceFollowsCudaSetDevice)
{
  EXPECT_EQ(rmm::get_current_cuda_device(), rmm::cuda_device_id{0});
  int const last = rmm::get_num_cuda_devices() - 1;
  RMM_CUDA_TRY(cudaSetDevice(last));
  EXPECT_EQ(rmm::get_current_cuda_device().value(), last);
}

TEST_F(CudaDevice, DeviceIdIsAValueType)
{
  constexpr rmm::cuda_device_id a{1};
  constexpr rmm::cuda_device_id b{2};
  static_assert(a < b && a != b && a == rmm::cuda_device_id{1});
  static_assert(rmm::cuda_device_id{}.value() == 0);
}

TEST_F(CudaDevice, AvailableMemoryIsConsistent)
{
  auto const [free_bytes, total_bytes] = rmm::available_device_memory();
  EXPECT_GT(total_bytes, 0U);
  EXPECT_LE(free_bytes, total_bytes);
}

TEST_F(CudaDevice, PercentOfFreeMemory)
{
  EXPECT_EQ(rmm::percent_of_free_device_memory(0), 0U);
  auto const free_before = rmm::available_device_memory().first;
  auto const half        = rmm::percent_of_free_device_memory(50);
  auto const all         = rmm::percent_of_free_device_memory(100);
  EXPECT_TRUE(rmm::is_aligned(half, rmm::CUDA_ALLOCATION_ALIGNMENT));
  EXPECT_TRUE(rmm::is_aligned(all, rmm::CUDA_ALLOCATION_ALIGNMENT));
  // Free memory can move a little between calls on a shared GPU; allow 1%.
  auto const tolerance = free_before / 100;
  EXPECT_NEAR(static_cast<double>(half), static_cast<double>(free_before) / 2, static_cast<double>(tolerance));
  EXPECT_LE(all, free_before + tolerance);
}

TEST_F(CudaDevice, PercentOutOfRangeIsRejected)
{
  EXPECT_THROW((void)rmm::percent_of_free_device_memory(-1), rmm::logic_error);
  EXPECT_THROW((void)rmm::percent_of_free_device_memory(101), rmm::logic_error);
}

TEST_F(CudaDevice, SetDeviceRaiiRestoresThePreviousDevice)
{
  int const last = rmm::get_num_cuda_devices() - 1;  // device 0 itself on a one-GPU host
  {
    rmm::cuda_set_device_raii const guard{rmm::cuda_device_id{last}};
    EXPECT_EQ(rmm::get_current_cuda_device().value(), last);
  }
  EXPECT_EQ(rmm::get_current_cuda_device().value(), 0);
}

TEST_F(CudaDevice, SetDeviceRaiiRejectsAMissingDevice)
{
  EXPECT_THROW(rmm::cuda_set_device_raii{rmm::cuda_device_id{1000}}, rmm::cuda_error);
  EXPECT_EQ(rmm::get_current_cuda_device().value(), 0);
}

}  // namespace
