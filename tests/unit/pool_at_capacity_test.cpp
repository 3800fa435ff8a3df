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

TEST(PoolAtCapacity, GivesBackAWholeFreeAllocationToServeALargerRequest)
{
  auto const u = unit();
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, std::nullopt,
                                     rmm::mr::pool_growth::virtual_memory};
  void* a = pool.allocate_sync(2 * u);
  void* b = pool.allocate_sync(2 * u);
  pool.deallocate_sync(a, 2 * u);
  // Three units: no free block is that large, and the device alone has one; with a's memory back
  // it has three, as it would for cudaMalloc with b live.
  void* c = nullptr;
  ASSERT_NO_THROW(c = pool.allocate_sync(3 * u)) << "the pool holds " << pool.pool_size() << " bytes";
  EXPECT_LE(pool.pool_size(), 5 * u) << "the free allocation went back before the request was mapped";
  EXPECT_EQ(cudaMemset(c, 0x3c, 3 * u), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  pool.deallocate_sync(c, 3 * u);
  pool.deallocate_sync(b, 2 * u);
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
  auto const u = unit();
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, std::nullopt,
                                     rmm::mr::pool_growth::virtual_memory};
  void* a = pool.allocate_sync(2 * u);
  void* b = pool.allocate_sync(2 * u);
  pool.deallocate_sync(a, 2 * u);
  EXPECT_THROW((void)pool.allocate_sync(4 * u), rmm::out_of_memory) << "b and this would exceed the device";
  // Nothing was lost on the way: the memory given back can still be had.
  void* c = nullptr;
  ASSERT_NO_THROW(c = pool.allocate_sync(2 * u));
  pool.deallocate_sync(c, 2 * u);
  pool.deallocate_sync(b, 2 * u);
}

TEST(PoolAtCapacity, ARequestNoDeviceCouldServeLeavesThePoolAsItIs)
{
  auto const u = unit();
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, std::nullopt,
                                     rmm::mr::pool_growth::virtual_memory};
  void* a = pool.allocate_sync(2 * u);
  void* b = pool.allocate_sync(2 * u);
  pool.deallocate_sync(a, 2 * u);
  EXPECT_THROW((void)pool.allocate_sync(40 * u), rmm::out_of_memory);
  EXPECT_EQ(pool.pool_size(), 4 * u) << "nothing was given back for a request that could never fit";
  pool.deallocate_sync(b, 2 * u);
}

}  // namespace
}  // namespace rmm::test
