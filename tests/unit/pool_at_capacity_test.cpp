// SPDX-License-Identifier: Apache-2.0
// A pool at the device's capacity serves what cudaMalloc would: when a request fits in no free
// block and the device has no memory left to grow, the physical allocations that lie wholly in
// free memory go back to the device and the request is mapped afresh.

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace rmm::test {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

/// A fifth of the device's free memory: each of two blocks of two units is one growth of the
/// pool (one physical allocation), and one unit is left on the device.
std::size_t unit() { return rmm::align_down(rmm::available_device_memory().first / 5, 64 * MiB); }

/// A pool holding two blocks of two units each, the first one freed: the device has one unit
/// left, the pool two free in one physical allocation.
struct pool_with_a_free_allocation {
  std::size_t const u = unit();
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, std::nullopt,
                                     rmm::mr::pool_growth::virtual_memory};
  void* live = nullptr;

  pool_with_a_free_allocation()
  {
    void* freed = pool.allocate_sync(2 * u);
    live        = pool.allocate_sync(2 * u);
    pool.deallocate_sync(freed, 2 * u);
  }
  ~pool_with_a_free_allocation() { pool.deallocate_sync(live, 2 * u); }
  pool_with_a_free_allocation(pool_with_a_free_allocation const&)            = delete;
  pool_with_a_free_allocation& operator=(pool_with_a_free_allocation const&) = delete;
};

TEST(PoolAtCapacity, GivesBackAWholeFreeAllocationToServeALargerRequest)
{
  pool_with_a_free_allocation p;
  auto const u = p.u;
  // Three units: no free block is that large, and the device alone has one; with the free
  // allocation back it has three, as it would for cudaMalloc with one block of two live.
  void* c = nullptr;
  ASSERT_NO_THROW(c = p.pool.allocate_sync(3 * u)) << "the pool holds " << p.pool.pool_size() << " bytes";
  EXPECT_LE(p.pool.pool_size(), 5 * u) << "the free allocation went back before the request was mapped";
  EXPECT_EQ(cudaMemset(c, 0x3c, 3 * u), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  p.pool.deallocate_sync(c, 3 * u);
}

TEST(PoolAtCapacity, AStreamRequestDoesTheSame)
{
  auto const u = unit();
  rmm::cuda_stream stream;
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, std::nullopt,
                                     rmm::mr::pool_growth::virtual_memory};
  void* a = pool.allocate(stream, 2 * u);
  void* b = pool.allocate(stream, 2 * u);
  pool.deallocate(stream, a, 2 * u);  // queued work may still use it: the pool waits for the stream
  void* c = nullptr;
  ASSERT_NO_THROW(c = pool.allocate(stream, 3 * u));
  EXPECT_EQ(cudaMemsetAsync(c, 0x3c, 3 * u, stream.value()), cudaSuccess);
  pool.deallocate(stream, c, 3 * u);
  pool.deallocate(stream, b, 2 * u);
  stream.synchronize();
}

TEST(PoolAtCapacity, StillRefusesWhatCannotFitBesideWhatIsLive)
{
  pool_with_a_free_allocation p;
  auto const u = p.u;
  EXPECT_THROW((void)p.pool.allocate_sync(4 * u), rmm::out_of_memory) << "the live block and this exceed the device";
  // Nothing was lost on the way: the memory given back can still be had.
  void* c = nullptr;
  ASSERT_NO_THROW(c = p.pool.allocate_sync(2 * u));
  p.pool.deallocate_sync(c, 2 * u);
}

TEST(PoolAtCapacity, ARequestNoDeviceCouldServeLeavesThePoolAsItIs)
{
  pool_with_a_free_allocation p;
  EXPECT_THROW((void)p.pool.allocate_sync(40 * p.u), rmm::out_of_memory);
  EXPECT_EQ(p.pool.pool_size(), 4 * p.u) << "nothing was given back for a request that could never fit";
}

}  // namespace
}  // namespace rmm::test
