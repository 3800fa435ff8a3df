// SPDX-License-Identifier: Apache-2.0
// The kernel-launching C++ examples of the RMM README (../shared/seeds/rmm-readme.txt), as
// written there, with checks of what they do. Label: gpu. The README's `kernel<<<...>>>` is
// spelled out as a small kernel here.

#include "backend.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/device_vector.hpp>
#include <rmm/error.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>

#include <gtest/gtest.h>
#include <thrust/execution_policy.h>
#include <thrust/host_vector.h>
#include <thrust/sort.h>
#include <thrust/uninitialized_fill.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace {

__global__ void fill_bytes(void* data, std::size_t bytes, unsigned char value)
{
  auto* p = static_cast<unsigned char*>(data);
  for (auto i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < bytes;
       i += std::size_t{gridDim.x} * blockDim.x) {
    p[i] = value;
  }
}

__global__ void add_one(std::int32_t* value) { *value += 1; }

class SeedReadmeKernels : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  void TearDown() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
};

TEST_F(SeedReadmeKernels, DeviceBuffer)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view s{stream};
  // Allocates at least 100 bytes on stream `s` using the *default* resource
  rmm::device_buffer b{100, s};
  void* p = b.data();  // Raw, untyped pointer to underlying device memory

  fill_bytes<<<1, 128, 0, s.value()>>>(b.data(), b.size(), 0x7E);  // `b` is only safe to use on `s`
  RMM_CUDA_TRY(cudaGetLastError());

  rmm::mr::cuda_memory_resource mr;
  // Allocates at least 100 bytes on stream `s` using the resource `mr`
  rmm::device_buffer b2{100, s, mr};

  std::vector<unsigned char> host(b.size());
  RMM_CUDA_TRY(cudaMemcpyAsync(host.data(), p, host.size(), cudaMemcpyDefault, s.value()));
  s.synchronize();
  EXPECT_EQ(host, std::vector<unsigned char>(b.size(), 0x7E));
  EXPECT_TRUE(b2.memory_resource() == rmm::device_async_resource_ref{mr});
}

TEST_F(SeedReadmeKernels, DeviceUvectorWithUninitializedFill)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view s{stream};
  // Allocates uninitialized storage for 100 `int32_t` elements on stream `s` using the
  // default resource
  rmm::device_uvector<int32_t> v(100, s);
  // Initializes the elements to 0
  thrust::uninitialized_fill(thrust::cuda::par.on(s.value()), v.begin(), v.end(), int32_t{0});

  rmm::mr::cuda_memory_resource mr;
  // Allocates uninitialized storage for 100 `int32_t` elements on stream `s` using the resource `mr`
  rmm::device_uvector<int32_t> v2{100, s, mr};

  std::vector<int32_t> host(v.size(), -1);
  RMM_CUDA_TRY(cudaMemcpyAsync(host.data(), v.data(), v.size() * sizeof(int32_t), cudaMemcpyDefault, s.value()));
  s.synchronize();
  EXPECT_EQ(host, std::vector<int32_t>(100, 0));
  EXPECT_EQ(v2.size(), 100U);
}

TEST_F(SeedReadmeKernels, DeviceScalar)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view s{stream};
  // Allocates uninitialized storage for a single `int32_t` in device memory
  rmm::device_scalar<int32_t> a{s};
  a.set_value(42, s);  // Updates the value in device memory to `42` on stream `s`

  add_one<<<1, 1, 0, s.value()>>>(a.data());  // Pass raw pointer to underlying element in device memory
  RMM_CUDA_TRY(cudaGetLastError());

  int32_t v = a.value(s);  // Retrieves the value from device to host on stream `s`
  EXPECT_EQ(v, 43);
}

// "thrust::sort(rmm::exec_policy(stream, ...);" - the README's line is cut off; the current
// signature takes the stream once (and optionally a resource).
TEST_F(SeedReadmeKernels, SortWithExecPolicy)
{
  rmm::cuda_stream stream;
  std::vector<std::int64_t> host(1 << 20);
  std::iota(host.begin(), host.end(), 0);
  std::shuffle(host.begin(), host.end(), std::mt19937_64{7});
  rmm::device_uvector<std::int64_t> v(host.size(), stream);
  RMM_CUDA_TRY(
    cudaMemcpyAsync(v.data(), host.data(), host.size() * sizeof(std::int64_t), cudaMemcpyDefault, stream.value()));

  thrust::sort(rmm::exec_policy(stream), v.begin(), v.end());

  std::vector<std::int64_t> sorted(host.size());
  RMM_CUDA_TRY(
    cudaMemcpyAsync(sorted.data(), v.data(), sorted.size() * sizeof(std::int64_t), cudaMemcpyDefault, stream.value()));
  stream.synchronize();
  std::sort(host.begin(), host.end());
  EXPECT_EQ(sorted, host);
}

// The device_vector example on one device: its memory comes from `mr` through thrust_allocator.
TEST_F(SeedReadmeKernels, DeviceVectorWithThrustAllocator)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto mr = rmm::mr::cuda_memory_resource{};
  rmm::device_vector<int> vec(16, rmm::mr::thrust_allocator<int>(rmm::cuda_stream_default, mr));
  EXPECT_EQ(vec.size(), 16U);
  EXPECT_TRUE(vec.get_allocator().memory_resource() == rmm::device_async_resource_ref{mr});
  thrust::host_vector<int> host = vec;  // device_vector initializes its elements
  EXPECT_EQ(std::vector<int>(host.begin(), host.end()), std::vector<int>(16, 0));
}

// "For example, recapitulating the previous example using rmm::device_vector:"
TEST_F(SeedReadmeKernels, DeviceVectorMultiDeviceExample)
{
  if (rmm::test::device_count() < 2) {
    GTEST_SKIP() << "needs two devices, this host has " << rmm::test::device_count();
  }
  {
    RMM_CUDA_TRY(cudaSetDevice(0));
    auto mr = rmm::mr::cuda_memory_resource{};
    rmm::device_vector<int> vec(16, rmm::mr::thrust_allocator<int>(rmm::cuda_stream_default, mr));
    RMM_CUDA_TRY(cudaSetDevice(1));
    cudaPointerAttributes attributes{};
    RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, thrust::raw_pointer_cast(vec.data())));
    EXPECT_EQ(attributes.device, 0);
    // No need to switch back to device 0 before ~vec runs
  }
  EXPECT_EQ(rmm::get_current_cuda_device().value(), 1) << "~vec restored the current device";
}

}  // namespace
