// SPDX-License-Identifier: Apache-2.0
// The simulated device behind --simulate-device-size, alone and under a pool.

#include "simulated_device_resource.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

using rmm::replay::simulated_device_resource;

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t GiB = std::size_t{1} << 30;

TEST(SimulatedDevice, HandsOutDistinctAddressesUpToItsCapacity)
{
  simulated_device_resource device{10 * MiB};
  auto* a = device.allocate_sync(4 * MiB);
  auto* b = device.allocate_sync(1);
  auto* c = device.allocate_sync(6 * MiB - 1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) - reinterpret_cast<std::uintptr_t>(a), 4 * MiB);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c) - reinterpret_cast<std::uintptr_t>(b), 512U);
  EXPECT_EQ(device.used_bytes(), 10 * MiB);
  EXPECT_EQ(device.allocate_sync(0), nullptr);
  try {
    (void)device.allocate_sync(1);
    FAIL() << "allocated beyond the capacity";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_EQ(std::string{e.what()},
              "out_of_memory: simulated device: cannot allocate 1 B: 10.00 MiB of its 10.00 MiB in use, 0 B free");
  }
  device.deallocate_sync(b, 1);
  device.deallocate_sync(a, 4 * MiB);
  EXPECT_EQ(device.used_bytes(), 6 * MiB - 1);
  EXPECT_EQ(device.peak_used_bytes(), 10 * MiB);
  device.deallocate_sync(c, 6 * MiB - 1);
  EXPECT_EQ(device.used_bytes(), 0U);
}

TEST(SimulatedDevice, ExceedsTheRealDeviceWithoutTouchingMemory)
{
  simulated_device_resource device{std::size_t{64} << 40};  // 64 TiB, far beyond any device or host
  auto* huge = device.allocate_sync(std::size_t{48} << 40);
  EXPECT_NE(huge, nullptr);
  device.deallocate_sync(huge, std::size_t{48} << 40);
}

TEST(SimulatedDevice, APoolOverItGrowsInChunks)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  simulated_device_resource device{GiB};
  rmm::mr::pool_memory_resource pool{device, 0};
  EXPECT_FALSE(pool.grows_contiguously());
  auto* a = pool.allocate_sync(1000);
  EXPECT_EQ(device.used_bytes(), 32 * MiB);  // one growth step
  auto* b = pool.allocate_sync(40 * MiB);
  EXPECT_EQ(device.used_bytes(), 72 * MiB);  // a second chunk, just large enough
  pool.deallocate_sync(b, 40 * MiB);
  pool.deallocate_sync(a, 1000);
}

}  // namespace
