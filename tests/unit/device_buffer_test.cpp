// SPDX-License-Identifier: Apache-2.0
#include "backend.hpp"
#include "device_memory.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/detail/resource_cast.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

namespace {

using rmm::test::to_host;

std::vector<std::uint8_t> iota_bytes(std::size_t n, std::uint8_t start = 0)
{
  std::vector<std::uint8_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

class DeviceBuffer : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  void TearDown() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  rmm::cuda_stream stream_;
};

TEST_F(DeviceBuffer, DefaultIsEmpty)
{
  rmm::device_buffer buffer;
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 0U);
  EXPECT_EQ(buffer.capacity(), 0U);
  EXPECT_TRUE(buffer.is_empty());
  EXPECT_EQ(buffer.stream(), rmm::cuda_stream_default);
  EXPECT_TRUE(buffer.memory_resource() == rmm::mr::get_current_device_resource_ref());
}

TEST_F(DeviceBuffer, SizedBufferUsesTheCurrentResource)
{
  rmm::mr::managed_memory_resource managed;
  auto previous = rmm::mr::set_current_device_resource(managed);
  {
    rmm::device_buffer buffer{1000, stream_};
    EXPECT_EQ(buffer.size(), 1000U);
    EXPECT_EQ(buffer.ssize(), 1000);
    EXPECT_EQ(buffer.capacity(), 1000U);
    EXPECT_EQ(buffer.stream(), stream_.view());
    EXPECT_TRUE(buffer.memory_resource() == rmm::device_async_resource_ref{managed});
    cudaPointerAttributes attributes{};
    RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, buffer.data()));
    EXPECT_EQ(attributes.type, cudaMemoryTypeManaged);
  }
  rmm::mr::set_current_device_resource(previous);
}

TEST_F(DeviceBuffer, CopiesFromHostAndDevice)
{
  auto const host = iota_bytes(4096);
  rmm::device_buffer from_host{host.data(), host.size(), stream_};
  stream_.synchronize();
  EXPECT_EQ(to_host(from_host.data(), from_host.size()), host);

  rmm::device_buffer from_device{from_host.data(), from_host.size(), stream_};
  stream_.synchronize();
  EXPECT_EQ(to_host(from_device.data(), from_device.size()), host);
  EXPECT_NE(from_device.data(), from_host.data());
}

TEST_F(DeviceBuffer, NullSourceWithNonZeroSizeIsRejected)
{
  EXPECT_THROW((rmm::device_buffer{nullptr, 16, stream_}), rmm::logic_error);
  EXPECT_NO_THROW((rmm::device_buffer{nullptr, 0, stream_}));
}

TEST_F(DeviceBuffer, DeepCopyUsesTheGivenResourceAndStream)
{
  auto const host = iota_bytes(300, 7);
  rmm::device_buffer original{host.data(), host.size(), stream_};
  rmm::mr::managed_memory_resource managed;
  rmm::cuda_stream other;
  stream_.synchronize();
  rmm::device_buffer copy{original, other, managed};
  other.synchronize();
  EXPECT_EQ(copy.size(), original.size());
  EXPECT_EQ(copy.stream(), other.view());
  EXPECT_TRUE(copy.memory_resource() == rmm::device_async_resource_ref{managed});
  EXPECT_EQ(to_host(copy.data(), copy.size()), host);
}

TEST_F(DeviceBuffer, MoveLeavesTheSourceEmpty)
{
  auto const host = iota_bytes(64);
  rmm::device_buffer a{host.data(), host.size(), stream_};
  void* const data = a.data();
  rmm::device_buffer b{std::move(a)};
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.size(), 64U);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT: moved-from state is specified
  EXPECT_EQ(a.size(), 0U);
  EXPECT_EQ(a.capacity(), 0U);
  EXPECT_EQ(a.stream(), rmm::cuda_stream_view{}) << "reset to the default stream, as in RMM";
  EXPECT_EQ(a.alignment(), 1U) << "reset as in RMM";

  rmm::device_buffer c{16, stream_};
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(b.stream(), rmm::cuda_stream_view{});  // NOLINT: moved-from state is specified
  EXPECT_EQ(b.alignment(), 1U);
  stream_.synchronize();
  EXPECT_EQ(to_host(c.data(), c.size()), host);
  // Self-move, spelled through a reference as it happens in real code, is harmless.
  auto& same = c;
  c          = std::move(same);
  EXPECT_EQ(c.data(), data);
}

TEST_F(DeviceBuffer, GrowingAMovedFromBufferFreesNothing)
{
  rmm::mr::tracking_resource_adaptor tracking{rmm::mr::cuda_memory_resource{}};
  rmm::device_buffer a{64, stream_, tracking};
  rmm::device_buffer b{std::move(a)};
  a.reserve(128, stream_);  // NOLINT: a moved-from buffer is empty and usable
  a.resize(256, stream_);
  EXPECT_EQ(tracking.get_unknown_frees(), 0U) << "an empty buffer must not free a null pointer";
  EXPECT_EQ(tracking.get_outstanding_allocations().size(), 2U);
}

TEST_F(DeviceBuffer, ResizeKeepsContents)
{
  auto const host = iota_bytes(100);
  rmm::device_buffer buffer{host.data(), host.size(), stream_};
  void* const before = buffer.data();

  buffer.resize(50, stream_);  // shrinking only changes the size
  EXPECT_EQ(buffer.size(), 50U);
  EXPECT_EQ(buffer.capacity(), 100U);
  EXPECT_EQ(buffer.data(), before);

  buffer.resize(400, stream_);  // growing reallocates and keeps the first 50 bytes
  EXPECT_EQ(buffer.size(), 400U);
  EXPECT_EQ(buffer.capacity(), 400U);
  stream_.synchronize();
  auto const back = to_host(buffer.data(), 50);
  EXPECT_EQ(back, std::vector<std::uint8_t>(host.begin(), host.begin() + 50));
}

TEST_F(DeviceBuffer, ReserveAndShrinkToFit)
{
  auto const host = iota_bytes(128);
  rmm::device_buffer buffer{host.data(), host.size(), stream_};
  buffer.reserve(64, stream_);  // no-op: already larger
  EXPECT_EQ(buffer.capacity(), 128U);
  buffer.reserve(1024, stream_);
  EXPECT_EQ(buffer.capacity(), 1024U);
  EXPECT_EQ(buffer.size(), 128U);
  buffer.shrink_to_fit(stream_);
  EXPECT_EQ(buffer.capacity(), 128U);
  stream_.synchronize();
  EXPECT_EQ(to_host(buffer.data(), buffer.size()), host);
  buffer.resize(0, stream_);
  buffer.shrink_to_fit(stream_);
  EXPECT_EQ(buffer.capacity(), 0U);
}

TEST_F(DeviceBuffer, SetStreamMovesLaterWork)
{
  rmm::device_buffer buffer{32, stream_};
  rmm::cuda_stream other;
  stream_.synchronize();
  buffer.set_stream(other);
  EXPECT_EQ(buffer.stream(), other.view());
}

TEST_F(DeviceBuffer, SharesOwnershipOfAResourcePassedByValue)
{
  // The seeds' pattern: a function taking an owning resource returns a buffer that outlives it.
  auto make = [](std::size_t size, rmm::mr::any_device_resource mr) {
    return std::make_unique<rmm::device_buffer>(size, rmm::cuda_stream_default, std::move(mr));
  };
  auto buffer = make(256, rmm::mr::cuda_async_memory_resource{});
  ASSERT_NE(rmm::mr::detail::resource_cast<rmm::mr::cuda_async_memory_resource>(buffer->memory_resource()), nullptr);
  buffer->resize(1 << 20, rmm::cuda_stream_default);  // the pool is still alive
  buffer.reset();
  auto with_default = make(64, rmm::mr::get_current_device_resource_ref());
  EXPECT_TRUE(with_default->memory_resource() == rmm::mr::get_current_device_resource_ref());
}

TEST_F(DeviceBuffer, OutlivesTheReplacementOfTheCurrentResource)
{
  // The table is the only owner of this pool; a buffer made with the default resource keeps it.
  (void)rmm::mr::set_current_device_resource(rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0});
  auto buffer = std::make_unique<rmm::device_buffer>(4096, stream_);
  (void)rmm::mr::reset_current_device_resource();
  auto* pool = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(buffer->memory_resource());
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->statistics().allocated_bytes, 4096U);
  rmm::test::write_tag(buffer->data(), 4096, 3, stream_);
  EXPECT_TRUE(rmm::test::has_tag(buffer->data(), 4096, 3, stream_));
  buffer.reset();  // frees into the pool, which then goes
}

TEST_F(DeviceBuffer, AllocationFailureNamesTheRequest)
{
  try {
    rmm::device_buffer huge{std::size_t{1} << 50, stream_};
    FAIL() << "1 PiB buffer allocated";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_NE(std::string{e.what()}.find("1.00 PiB"), std::string::npos) << e.what();
  }
}

TEST_F(DeviceBuffer, DefaultAlignmentIsTheCudaAllocationAlignment)
{
  rmm::device_buffer buffer{100, stream_};
  EXPECT_EQ(buffer.alignment(), rmm::CUDA_ALLOCATION_ALIGNMENT);
  EXPECT_TRUE(rmm::is_pointer_aligned(buffer.data(), rmm::CUDA_ALLOCATION_ALIGNMENT));
}

TEST_F(DeviceBuffer, AlignmentIsKeptByResizeMoveAndCopy)
{
  auto const host = iota_bytes(200);
  rmm::device_buffer buffer{host.data(), host.size(), 128, stream_};
  EXPECT_EQ(buffer.alignment(), 128U);
  EXPECT_TRUE(rmm::is_pointer_aligned(buffer.data(), 128));
  buffer.resize(5000, stream_);
  EXPECT_EQ(buffer.alignment(), 128U);
  EXPECT_TRUE(rmm::is_pointer_aligned(buffer.data(), 128));
  rmm::device_buffer copy{buffer, stream_};
  EXPECT_EQ(copy.alignment(), 128U);
  rmm::device_buffer moved{std::move(copy)};
  EXPECT_EQ(moved.alignment(), 128U);
  stream_.synchronize();
  EXPECT_EQ(to_host(moved.data(), host.size()), host);

  rmm::device_buffer sized{64, 32, stream_, rmm::mr::cuda_memory_resource{}};
  EXPECT_EQ(sized.size(), 64U);
  EXPECT_EQ(sized.alignment(), 32U);
}

TEST_F(DeviceBuffer, AlignmentMustBeAPowerOfTwo)
{
  EXPECT_THROW((rmm::device_buffer{100, std::size_t{48}, stream_}), rmm::invalid_argument);
  EXPECT_THROW((rmm::device_buffer{100, std::size_t{0}, stream_}), rmm::invalid_argument);
  auto const host = iota_bytes(8);
  EXPECT_THROW((rmm::device_buffer{host.data(), host.size(), std::size_t{3}, stream_}), rmm::invalid_argument);
}

// As RMM: an alignment no resource gives is bad_alloc when memory is asked for, and an empty
// buffer asks for none, whatever its alignment.
TEST_F(DeviceBuffer, AnAlignmentAbove256IsBadAllocOnceMemoryIsAskedFor)
{
  rmm::mr::tracking_resource_adaptor tracked{rmm::mr::cuda_memory_resource{}};
  rmm::device_buffer empty{std::size_t{0}, std::size_t{512}, stream_, tracked};
  EXPECT_EQ(empty.alignment(), 512U);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(tracked.get_outstanding_allocations().size(), 0U) << "an empty buffer asks its resource for nothing";
  EXPECT_THROW(empty.resize(100, stream_), rmm::bad_alloc);
  EXPECT_EQ(empty.size(), 0U) << "a failed growth leaves the buffer as it was";
  EXPECT_THROW((rmm::device_buffer{100, std::size_t{512}, stream_}), rmm::bad_alloc);
  rmm::device_buffer copy{empty, stream_};
  EXPECT_EQ(copy.alignment(), 512U) << "an empty source copies without memory";
  auto const host = iota_bytes(8);
  EXPECT_THROW((rmm::device_buffer{host.data(), host.size(), std::size_t{1024}, stream_}), rmm::bad_alloc);
}

TEST_F(DeviceBuffer, MoveAssignmentFreesTheOldMemory)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 1 << 20};
  rmm::device_buffer target{4096, stream_, pool};
  rmm::device_buffer source{256, stream_, pool};
  EXPECT_EQ(pool.statistics().allocated_bytes, 4096U + 256U);
  target = std::move(source);
  EXPECT_EQ(pool.statistics().allocated_bytes, 256U);
  EXPECT_EQ(target.size(), 256U);
}

// Multi-device rules from the RMM documentation.
TEST_F(DeviceBuffer, RemembersItsDeviceAndFreesThereWithAnotherDeviceCurrent)
{
  if (rmm::test::device_count() < 2) { GTEST_SKIP() << "needs two devices"; }
  RMM_CUDA_TRY(cudaSetDevice(1));
  rmm::mr::cuda_memory_resource mr;
  auto buffer = std::make_unique<rmm::device_buffer>(4096, rmm::cuda_stream_default, mr);
  EXPECT_EQ(buffer->device().value(), 1);
  cudaPointerAttributes attributes{};
  RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, buffer->data()));
  EXPECT_EQ(attributes.device, 1);
  RMM_CUDA_TRY(cudaSetDevice(0));
  buffer->resize(8192, rmm::cuda_stream_default);  // reallocates on device 1
  RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, buffer->data()));
  EXPECT_EQ(attributes.device, 1);
  EXPECT_EQ(rmm::get_current_cuda_device().value(), 0) << "the buffer restores the caller's device";
  buffer.reset();  // destroyed with device 0 current
  EXPECT_EQ(rmm::get_current_cuda_device().value(), 0);
}

}  // namespace
