// SPDX-License-Identifier: Apache-2.0
// The multi-device rules of the RMM documentation, one test per rule, on two devices (the emulator
// has two; on a one-GPU host these skip and say so):
//
// 1. device_buffer, device_uvector and device_scalar record the device current at construction
//    and make it current for every allocation and deallocation, the destructor included.
// 2. So they may be destroyed (and resized) with another device current; the caller's current
//    device is left as it was.
// 3. thrust_allocator (behind device_vector and exec_policy) records the device at construction
//    and makes it current whenever it allocates or deallocates.
// 4. rmm's polymorphic_allocator follows the same rule (our extension: the seeds are silent).
//
// A device_recording_resource notes the current device at each (de)allocation; the pointer
// attributes say where the memory really is.

#include "backend.hpp"
#include "device_recording_resource.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace {

using rmm::test::device_recording_resource;

int device_of(void const* ptr)
{
  cudaPointerAttributes attributes{};
  RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, ptr));
  return attributes.device;
}

int current_device() { return rmm::get_current_cuda_device().value(); }

class MultiDevice : public ::testing::Test {
 protected:
  void SetUp() override
  {
    if (rmm::test::device_count() < 2) {
      GTEST_SKIP() << "needs two devices, this host has " << rmm::test::device_count();
    }
    RMM_CUDA_TRY(cudaSetDevice(1));  // resources and containers below are created on device 1
  }
  void TearDown() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
};

TEST_F(MultiDevice, DeviceBufferAllocatesResizesAndFreesOnItsDevice)
{
  device_recording_resource on_1;
  auto buffer = std::make_unique<rmm::device_buffer>(1024, rmm::cuda_stream_default, on_1);
  EXPECT_EQ(buffer->device().value(), 1);
  EXPECT_EQ(device_of(buffer->data()), 1);

  RMM_CUDA_TRY(cudaSetDevice(0));
  buffer->resize(1 << 20, rmm::cuda_stream_default);
  EXPECT_EQ(device_of(buffer->data()), 1);
  EXPECT_EQ(current_device(), 0) << "the caller's device is restored";
  buffer.reset();
  EXPECT_EQ(current_device(), 0);
  EXPECT_EQ(on_1.devices(true), (std::vector<int>{1, 1}));
  EXPECT_EQ(on_1.devices(false), (std::vector<int>{1, 1}));
}

TEST_F(MultiDevice, DeviceBufferMoveAssignmentFreesTheOldMemoryOnItsDevice)
{
  device_recording_resource on_1;
  rmm::device_buffer on_device_1{256, rmm::cuda_stream_default, on_1};
  RMM_CUDA_TRY(cudaSetDevice(0));
  rmm::device_buffer on_device_0{256, rmm::cuda_stream_default};
  on_device_1 = std::move(on_device_0);  // frees device 1's memory, with device 1 current
  EXPECT_EQ(on_1.devices(false), (std::vector<int>{1}));
  EXPECT_EQ(on_device_1.device().value(), 0);
  EXPECT_EQ(current_device(), 0);
}

TEST_F(MultiDevice, DeviceUvectorAllocatesResizesAndFreesOnItsDevice)
{
  device_recording_resource on_1;
  rmm::cuda_stream stream_1;  // a stream of device 1
  auto v = std::make_unique<rmm::device_uvector<int>>(100, stream_1, on_1);
  EXPECT_EQ(v->device().value(), 1);
  RMM_CUDA_TRY(cudaSetDevice(0));
  v->set_element(10, 5, stream_1);  // element access works with another device current
  EXPECT_EQ(v->element(10, stream_1), 5);
  v->resize(10000, stream_1);  // reallocates
  v->resize(50, stream_1);
  v->shrink_to_fit(stream_1);  // reallocates
  EXPECT_EQ(v->element(10, stream_1), 5);
  EXPECT_EQ(device_of(v->data()), 1);
  v.reset();
  EXPECT_EQ(current_device(), 0);
  EXPECT_EQ(on_1.devices(true), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(on_1.devices(false), (std::vector<int>{1, 1, 1}));
}

TEST_F(MultiDevice, DeviceScalarFreesOnItsDevice)
{
  device_recording_resource on_1;
  rmm::cuda_stream stream_1;
  auto s = std::make_unique<rmm::device_scalar<double>>(1.25, stream_1, on_1);
  RMM_CUDA_TRY(cudaSetDevice(0));
  EXPECT_EQ(s->value(stream_1), 1.25);
  EXPECT_EQ(device_of(s->data()), 1);
  s.reset();
  EXPECT_EQ(current_device(), 0);
  EXPECT_EQ(on_1.devices(true), (std::vector<int>{1}));
  EXPECT_EQ(on_1.devices(false), (std::vector<int>{1}));
}

TEST_F(MultiDevice, ContainersOnTheDefaultResourceUseTheirDevicesResource)
{
  // The per-device table: created with device 1 current, a container takes device 1's resource.
  device_recording_resource on_1;
  auto previous = rmm::mr::set_per_device_resource(rmm::cuda_device_id{1}, on_1);
  {
    rmm::device_uvector<char> v(64, rmm::cuda_stream_default);
    RMM_CUDA_TRY(cudaSetDevice(0));
  }
  rmm::mr::set_per_device_resource(rmm::cuda_device_id{1}, previous);
  EXPECT_EQ(on_1.devices(true), (std::vector<int>{1}));
  EXPECT_EQ(on_1.devices(false), (std::vector<int>{1}));
}

TEST_F(MultiDevice, ThrustAllocatorAllocatesAndFreesOnItsDevice)
{
  device_recording_resource on_1;
  rmm::mr::thrust_allocator<int> alloc{rmm::cuda_stream_default, on_1};
  EXPECT_EQ(alloc.device().value(), 1);
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto p = alloc.allocate(1000);
  EXPECT_EQ(device_of(p.get()), 1);
  EXPECT_EQ(current_device(), 0);
  rmm::mr::thrust_allocator<char> rebound{alloc};  // rebinding keeps the device
  EXPECT_EQ(rebound.device().value(), 1);
  alloc.deallocate(p, 1000);
  EXPECT_EQ(current_device(), 0);
  EXPECT_EQ(on_1.devices(true), (std::vector<int>{1}));
  EXPECT_EQ(on_1.devices(false), (std::vector<int>{1}));
}

TEST_F(MultiDevice, ExecPolicyTemporariesComeFromItsDevice)
{
  device_recording_resource on_1;
  rmm::cuda_stream stream_1;
  rmm::exec_policy policy{stream_1, on_1};
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto& alloc = policy.get_allocator();
  auto p      = alloc.allocate(512);
  alloc.deallocate(p, 512);
  EXPECT_EQ(on_1.devices(true), (std::vector<int>{1}));
  EXPECT_EQ(on_1.devices(false), (std::vector<int>{1}));
}

TEST_F(MultiDevice, PolymorphicAllocatorAllocatesAndFreesOnItsDevice)
{
  device_recording_resource on_1;
  rmm::mr::polymorphic_allocator<float> alloc{on_1};
  rmm::cuda_stream stream_1;
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto adapted = rmm::mr::stream_allocator_adaptor(alloc, stream_1);
  float* p     = adapted.allocate(64);
  EXPECT_EQ(device_of(p), 1);
  adapted.deallocate(p, 64);
  EXPECT_EQ(current_device(), 0);
  EXPECT_EQ(on_1.devices(true), (std::vector<int>{1}));
  EXPECT_EQ(on_1.devices(false), (std::vector<int>{1}));
}

}  // namespace
