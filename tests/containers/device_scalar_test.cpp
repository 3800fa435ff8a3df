// SPDX-License-Identifier: Apache-2.0
// device_scalar: one value in device memory, set and read from the host on a stream.

#include <rmm/cuda_stream.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>

namespace {

struct pair_of_ints {
  std::int32_t first;
  std::int32_t second;
  friend bool operator==(pair_of_ints const&, pair_of_ints const&) = default;
};

static_assert(!std::is_default_constructible_v<rmm::device_scalar<int>>, "needs a stream");
static_assert(!std::is_copy_constructible_v<rmm::device_scalar<int>>, "copies need a stream");
static_assert(std::is_nothrow_move_constructible_v<rmm::device_scalar<int>>);
template <typename S>
concept takes_temporary_async = requires(S s, rmm::cuda_stream_view stream)
{
  s.set_value_async(1, stream);
};
static_assert(!takes_temporary_async<rmm::device_scalar<int>>, "an async copy from a temporary would dangle");

class DeviceScalar : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  rmm::cuda_stream stream_;
};

TEST_F(DeviceScalar, SetValueThenValue)
{
  rmm::device_scalar<std::int32_t> a{stream_};
  EXPECT_NE(a.data(), nullptr);
  EXPECT_EQ(a.size(), 1U);
  a.set_value(42, stream_);
  EXPECT_EQ(a.value(stream_), 42);
  a.set_value(-7, stream_);
  EXPECT_EQ(a.value(stream_), -7);
}

TEST_F(DeviceScalar, InitialValue)
{
  rmm::device_scalar<double> d{2.5, stream_};
  EXPECT_EQ(d.value(stream_), 2.5);
  rmm::device_scalar<pair_of_ints> p{pair_of_ints{3, 4}, stream_};
  EXPECT_EQ(p.value(stream_), (pair_of_ints{3, 4}));
}

TEST_F(DeviceScalar, AsyncSetAndZero)
{
  rmm::device_scalar<std::uint64_t> s{stream_};
  std::uint64_t const big = 0x0123456789ABCDEFULL;
  s.set_value_async(big, stream_);
  stream_.synchronize();
  EXPECT_EQ(s.value(stream_), big);
  s.set_value_to_zero_async(stream_);
  EXPECT_EQ(s.value(stream_), 0U);
}

TEST_F(DeviceScalar, DeepCopyAndMove)
{
  rmm::device_scalar<int> original{17, stream_};
  rmm::cuda_stream other;
  rmm::mr::managed_memory_resource managed;
  rmm::device_scalar<int> copy{original, other, managed};
  EXPECT_NE(copy.data(), original.data());
  EXPECT_EQ(copy.value(other), 17);
  EXPECT_EQ(copy.stream(), other.view());
  EXPECT_TRUE(copy.memory_resource() == rmm::device_async_resource_ref{managed});

  int* const data = copy.data();
  rmm::device_scalar<int> moved{std::move(copy)};
  EXPECT_EQ(moved.data(), data);
  EXPECT_EQ(moved.value(other), 17);
}

TEST_F(DeviceScalar, StreamResourceAndDevice)
{
  rmm::device_scalar<float> f{stream_};
  EXPECT_EQ(f.stream(), stream_.view());
  EXPECT_TRUE(f.memory_resource() == rmm::mr::get_current_device_resource_ref());
  EXPECT_EQ(f.device().value(), 0);
  rmm::cuda_stream other;
  stream_.synchronize();
  f.set_stream(other);
  EXPECT_EQ(f.stream(), other.view());
}

}  // namespace

namespace {

struct alignas(512) over_aligned_scalar {
  char byte;
};

TEST(DeviceScalarAlignment, AnOverAlignedTypeIsBadAlloc)
{
  rmm::cuda_stream stream;
  EXPECT_THROW((rmm::device_scalar<over_aligned_scalar>{stream}), rmm::bad_alloc) << "as RMM's";
}

}  // namespace
