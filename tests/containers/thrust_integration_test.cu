// SPDX-License-Identifier: Apache-2.0
// Thrust with rmm: exec_policy's temporaries and device_vector's storage come from rmm resources,
// device_uvector works with Thrust algorithms and kernels. Label: gpu.

#include "backend.hpp"
#include "device_recording_resource.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/device_vector.hpp>
#include <rmm/error.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>

#include <cuda/std/span>
#include <gtest/gtest.h>
#include <thrust/count.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace {

using rmm::test::device_recording_resource;

__global__ void square_all(cuda::std::span<std::int32_t> values)
{
  for (auto i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < values.size();
       i += std::size_t{gridDim.x} * blockDim.x) {
    values[i] = values[i] * values[i];
  }
}

struct is_even {
  __device__ bool operator()(std::int32_t x) const { return x % 2 == 0; }
};

class ThrustIntegration : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  void TearDown() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  rmm::cuda_stream stream_;
};

TEST_F(ThrustIntegration, SortTemporariesComeFromTheGivenResource)
{
  device_recording_resource recorder;
  rmm::device_uvector<std::uint32_t> v(1 << 20, stream_);
  thrust::sequence(rmm::exec_policy(stream_), v.rbegin(), v.rend());  // descending
  thrust::sort(rmm::exec_policy(stream_, recorder), v.begin(), v.end());
  EXPECT_GE(recorder.allocations(), 1U) << "radix sort needs temporary storage";
  EXPECT_EQ(recorder.allocations(), recorder.deallocations());
  EXPECT_EQ(v.front_element(stream_), 0U);
  EXPECT_EQ(v.back_element(stream_), (1U << 20) - 1);
}

TEST_F(ThrustIntegration, TemporariesComeFromTheCurrentResourceByDefault)
{
  device_recording_resource recorder;
  auto previous = rmm::mr::set_current_device_resource(recorder);
  {
    rmm::device_uvector<std::int32_t> v(100000, stream_);
    thrust::sequence(rmm::exec_policy_nosync(stream_), v.begin(), v.end());
    auto const sum = thrust::reduce(rmm::exec_policy(stream_), v.begin(), v.end(), std::int64_t{0});
    EXPECT_EQ(sum, std::int64_t{100000} * 99999 / 2);
  }
  rmm::mr::set_current_device_resource(previous);
  EXPECT_GE(recorder.allocations(), 2U) << "the vector and the reduction's scratch";
  EXPECT_EQ(recorder.allocations(), recorder.deallocations());
}

TEST_F(ThrustIntegration, NosyncPolicyRunsInStreamOrder)
{
  rmm::device_uvector<std::int32_t> v(1 << 16, stream_);
  thrust::sequence(rmm::exec_policy_nosync(stream_), v.begin(), v.end());
  thrust::sort(rmm::exec_policy_nosync(stream_), v.rbegin(), v.rend());  // descending
  auto const evens = thrust::count_if(rmm::exec_policy_nosync(stream_), v.begin(), v.end(), is_even{});
  EXPECT_EQ(evens, 1 << 15);
  EXPECT_EQ(v.front_element(stream_), (1 << 16) - 1);
}

TEST_F(ThrustIntegration, DeviceVectorStorageComesFromItsAllocatorsResource)
{
  device_recording_resource recorder;
  {
    rmm::device_vector<double> vec(1000, 1.5, rmm::mr::thrust_allocator<double>(stream_, recorder));
    EXPECT_EQ(recorder.allocations(), 1U);
    vec.resize(5000, 2.5);  // grows through the same allocator
    EXPECT_EQ(recorder.allocations(), 2U);
    thrust::host_vector<double> host = vec;
    EXPECT_EQ(host[999], 1.5);
    EXPECT_EQ(host[4999], 2.5);
  }
  EXPECT_EQ(recorder.allocations(), recorder.deallocations());
}

TEST_F(ThrustIntegration, DeviceVectorDefaultsToTheCurrentResource)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 1 << 20};
  auto previous = rmm::mr::set_current_device_resource(pool);
  {
    rmm::device_vector<int> vec(256);
    EXPECT_EQ(pool.statistics().allocated_bytes, 1024U);
  }
  rmm::mr::set_current_device_resource(previous);
  EXPECT_EQ(pool.statistics().allocated_bytes, 0U);
}

TEST_F(ThrustIntegration, SpansPassDeviceUvectorsToKernels)
{
  rmm::device_uvector<std::int32_t> v(1000, stream_);
  thrust::sequence(rmm::exec_policy(stream_), v.begin(), v.end());
  square_all<<<4, 256, 0, stream_.value()>>>(v);
  RMM_CUDA_TRY(cudaGetLastError());
  EXPECT_EQ(v.element(999, stream_), 999 * 999);
  EXPECT_EQ(v.element(12, stream_), 144);
}

TEST_F(ThrustIntegration, DeviceVectorCreatedOnDevice0IsDestroyedWithDevice1Current)
{
  if (rmm::test::device_count() < 2) {
    GTEST_SKIP() << "needs two devices, this host has " << rmm::test::device_count();
  }
  device_recording_resource on_0;
  auto vec =
    std::make_unique<rmm::device_vector<int>>(64, 7, rmm::mr::thrust_allocator<int>(rmm::cuda_stream_default, on_0));
  RMM_CUDA_TRY(cudaSetDevice(1));
  vec.reset();
  EXPECT_EQ(rmm::get_current_cuda_device().value(), 1);
  EXPECT_EQ(on_0.devices(true), (std::vector<int>{0}));
  EXPECT_EQ(on_0.devices(false), (std::vector<int>{0}));
}

TEST_F(ThrustIntegration, WorkOnDevice1FreesThereWithDevice0Current)
{
  if (rmm::test::device_count() < 2) {
    GTEST_SKIP() << "needs two devices, this host has " << rmm::test::device_count();
  }
  RMM_CUDA_TRY(cudaSetDevice(1));  // Thrust launches on the current device: run it on device 1
  device_recording_resource on_1;
  rmm::cuda_stream stream_1;
  auto v = std::make_unique<rmm::device_uvector<std::int32_t>>(1 << 18, stream_1, on_1);
  thrust::sequence(rmm::exec_policy(stream_1, on_1), v->rbegin(), v->rend());
  thrust::sort(rmm::exec_policy(stream_1, on_1), v->begin(), v->end());
  RMM_CUDA_TRY(cudaSetDevice(0));
  EXPECT_EQ(v->front_element(stream_1), 0);
  v.reset();
  EXPECT_EQ(rmm::get_current_cuda_device().value(), 0);
  EXPECT_GE(on_1.allocations(), 2U);
  EXPECT_EQ(on_1.allocations(), on_1.deallocations());
  for (int d : on_1.devices(true)) { EXPECT_EQ(d, 1); }
  for (int d : on_1.devices(false)) { EXPECT_EQ(d, 1); }
}

}  // namespace
