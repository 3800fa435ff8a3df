// SPDX-License-Identifier: Apache-2.0
// Kernels read and write memory from every resource: the memory is really device-accessible,
// sized as asked, and stream-ordered use on the allocating stream is correct. Label: gpu.

#include "device_memory.hpp"
#include "upstream_resource_factories.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace rmm::test {
namespace {

__global__ void fill_index(std::uint32_t* data, std::size_t count, std::uint32_t salt)
{
  for (auto i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    data[i] = static_cast<std::uint32_t>(i) ^ salt;
  }
}

__global__ void count_mismatches(std::uint32_t const* data,
                                 std::size_t count,
                                 std::uint32_t salt,
                                 unsigned long long* errors)
{
  for (auto i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    if (data[i] != (static_cast<std::uint32_t>(i) ^ salt)) { atomicAdd(errors, 1ULL); }
  }
}

unsigned long long mismatches(std::uint32_t const* data,
                              std::size_t count,
                              std::uint32_t salt,
                              rmm::cuda_stream_view stream)
{
  rmm::device_buffer errors{sizeof(unsigned long long), stream, rmm::mr::cuda_memory_resource{}};
  RMM_CUDA_TRY(cudaMemsetAsync(errors.data(), 0, errors.size(), stream.value()));
  count_mismatches<<<256, 256, 0, stream.value()>>>(data, count, salt, static_cast<unsigned long long*>(errors.data()));
  RMM_CUDA_TRY(cudaGetLastError());
  unsigned long long host{};
  RMM_CUDA_TRY(cudaMemcpyAsync(&host, errors.data(), sizeof(host), cudaMemcpyDefault, stream.value()));
  stream.synchronize();
  return host;
}

template <class Factory>
class KernelAccess : public ::testing::Test {
 protected:
  void SetUp() override
  {
    RMM_CUDA_TRY(cudaSetDevice(0));
    if (auto const reason = Factory::unavailable_reason(); !reason.empty()) { GTEST_SKIP() << reason; }
  }
};

using all_resources = ::testing::Types<cuda_factory,
                                       managed_factory,
                                       pinned_host_factory,
                                       system_factory,
                                       cuda_async_factory,
                                       cuda_async_primed_factory,
                                       cuda_async_view_factory>;
TYPED_TEST_SUITE(KernelAccess, all_resources, factory_names);

TYPED_TEST(KernelAccess, KernelsWriteAndReadEveryElement)
{
  auto mr = TypeParam::make();
  rmm::cuda_stream stream;
  for (std::size_t count : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 24}) {
    auto* data = static_cast<std::uint32_t*>(mr.allocate(stream, count * sizeof(std::uint32_t)));
    fill_index<<<256, 256, 0, stream.value()>>>(data, count, 0xA5A5A5A5U);
    RMM_CUDA_TRY(cudaGetLastError());
    EXPECT_EQ(mismatches(data, count, 0xA5A5A5A5U, stream), 0U) << count << " elements";
    mr.deallocate(stream, data, count * sizeof(std::uint32_t));
  }
}

TYPED_TEST(KernelAccess, StreamOrderedReuseNeverSeesAnotherAllocationsData)
{
  // Allocate, fill, free and reallocate on one stream without synchronizing: each kernel sees
  // the values its own predecessor wrote.
  auto mr = TypeParam::make();
  rmm::cuda_stream stream;
  constexpr std::size_t count = std::size_t{1} << 20;
  for (std::uint32_t round = 0; round < 16; ++round) {
    auto* data = static_cast<std::uint32_t*>(mr.allocate(stream, count * sizeof(std::uint32_t)));
    fill_index<<<512, 256, 0, stream.value()>>>(data, count, round);
    RMM_CUDA_TRY(cudaGetLastError());
    EXPECT_EQ(mismatches(data, count, round, stream), 0U) << "round " << round;
    mr.deallocate(stream, data, count * sizeof(std::uint32_t));
  }
}

TEST(DeviceBufferKernel, CopyAndResizeKeepKernelWrittenData)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  rmm::cuda_stream stream;
  constexpr std::size_t count = 100000;
  rmm::device_buffer buffer{count * sizeof(std::uint32_t), stream};
  fill_index<<<128, 256, 0, stream.value()>>>(static_cast<std::uint32_t*>(buffer.data()), count, 7);
  RMM_CUDA_TRY(cudaGetLastError());
  buffer.resize(2 * count * sizeof(std::uint32_t), stream);
  EXPECT_EQ(mismatches(static_cast<std::uint32_t*>(buffer.data()), count, 7, stream), 0U);
  rmm::device_buffer copy{buffer, stream};
  EXPECT_EQ(mismatches(static_cast<std::uint32_t*>(copy.data()), count, 7, stream), 0U);
}

}  // namespace
}  // namespace rmm::test

namespace rmm::test {
namespace {

__global__ void slow_fill(std::uint32_t* data, std::size_t count, std::uint32_t value, long long spin_cycles)
{
  auto const start = clock64();
  while (clock64() - start < spin_cycles) {}
  for (auto i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    data[i] = value;
  }
}

// A pool of exactly 32 blocks: all are filled by a slow kernel on one stream and freed there, then
// another stream takes one and fills it at once. Without the event between the streams the slow
// kernel's writes would land last.
TEST(PoolKernel, ABlockHandedToAnotherStreamWaitsForTheFreeingStreamsKernels)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  constexpr std::size_t block = std::size_t{1} << 20;
  constexpr int blocks        = 32;
  constexpr std::size_t count = block / sizeof(std::uint32_t);
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, blocks * block, blocks * block};
  rmm::cuda_stream first;
  rmm::cuda_stream second;
  std::vector<std::uint32_t*> taken;
  for (int i = 0; i < blocks; ++i) { taken.push_back(static_cast<std::uint32_t*>(pool.allocate(first, block))); }
  for (auto* p : taken) {
    slow_fill<<<64, 256, 0, first.value()>>>(p, count, 0xAAAAAAAAU, 20'000'000);  // ~10 ms each at 2 GHz
    RMM_CUDA_TRY(cudaGetLastError());
  }
  for (auto* p : taken) { pool.deallocate(first, p, block); }
  auto* b = static_cast<std::uint32_t*>(pool.allocate(second, block));
  EXPECT_EQ(cudaStreamQuery(first.value()), cudaErrorNotReady) << "the hand-over synchronized the device";
  (void)cudaGetLastError();
  fill_index<<<64, 256, 0, second.value()>>>(b, count, 0x5555U);
  RMM_CUDA_TRY(cudaGetLastError());
  first.synchronize();
  EXPECT_EQ(mismatches(b, count, 0x5555U, second), 0U) << "a kernel on the freeing stream wrote after the hand-over";
  pool.deallocate(second, b, block);
}

}  // namespace
}  // namespace rmm::test
