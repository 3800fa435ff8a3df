// SPDX-License-Identifier: Apache-2.0
// device_uvector: uninitialized typed storage over device_buffer, host-side element access
// through copies on a stream (no kernels, so these run on the emulator and on a GPU alike).

#include "backend.hpp"
#include "device_memory.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <cuda/std/span>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace {

struct point {
  float x;
  float y;
  std::int32_t id;
  friend bool operator==(point const&, point const&) = default;
};

template <typename T>
std::vector<T> to_host_vector(rmm::device_uvector<T> const& v)
{
  std::vector<T> host(v.size());
  if (!host.empty()) { RMM_CUDA_TRY(cudaMemcpy(host.data(), v.data(), v.size() * sizeof(T), cudaMemcpyDefault)); }
  return host;
}

template <typename T>
void from_host_vector(rmm::device_uvector<T>& v, std::vector<T> const& host)
{
  ASSERT_EQ(v.size(), host.size());
  RMM_CUDA_TRY(cudaMemcpy(v.data(), host.data(), host.size() * sizeof(T), cudaMemcpyDefault));
}

class DeviceUvector : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  rmm::cuda_stream stream_;
};

// The container's own guarantees, checked at compile time.
static_assert(!std::is_default_constructible_v<rmm::device_uvector<int>>, "needs a stream");
static_assert(!std::is_copy_constructible_v<rmm::device_uvector<int>>, "copies need a stream");
static_assert(std::is_nothrow_move_constructible_v<rmm::device_uvector<int>>);
static_assert(std::is_nothrow_move_assignable_v<rmm::device_uvector<int>>);
static_assert(std::is_same_v<rmm::device_uvector<int>::iterator, int*>, "iterators are raw device pointers");
// A temporary passed to set_element_async would be gone before the copy reads it.
template <typename V>
concept takes_temporary_async = requires(V v, rmm::cuda_stream_view s)
{
  v.set_element_async(0, 1, s);
};
template <typename V>
concept takes_lvalue_async = requires(V v, int const& x, rmm::cuda_stream_view s)
{
  v.set_element_async(0, x, s);
};
static_assert(!takes_temporary_async<rmm::device_uvector<int>>);
static_assert(takes_lvalue_async<rmm::device_uvector<int>>);

TEST_F(DeviceUvector, SizeCapacityAndResource)
{
  rmm::device_uvector<std::int32_t> v(1000, stream_);
  EXPECT_EQ(v.size(), 1000U);
  EXPECT_EQ(v.ssize(), 1000);
  EXPECT_EQ(v.capacity(), 1000U);
  EXPECT_FALSE(v.is_empty());
  EXPECT_NE(v.data(), nullptr);
  EXPECT_EQ(v.stream(), stream_.view());
  EXPECT_TRUE(v.memory_resource() == rmm::mr::get_current_device_resource_ref());
  EXPECT_EQ(v.device().value(), 0);
  EXPECT_EQ(std::distance(v.begin(), v.end()), 1000);
  EXPECT_EQ(v.cend() - v.cbegin(), 1000);
  EXPECT_EQ(v.element_ptr(10), v.data() + 10);
  EXPECT_EQ(&*v.rbegin(), v.data() + 999);  // host code only takes the address, never reads it
  EXPECT_EQ(std::distance(v.rbegin(), v.rend()), 1000);
}

TEST_F(DeviceUvector, EmptyVector)
{
  rmm::device_uvector<double> v(0, stream_);
  EXPECT_TRUE(v.is_empty());
  EXPECT_EQ(v.begin(), v.end());
  EXPECT_THROW((void)v.front_element(stream_), rmm::out_of_range);
  EXPECT_THROW((void)v.back_element(stream_), rmm::out_of_range);
}

TEST_F(DeviceUvector, ElementsAreNotInitialized)
{
  // The emulator fills fresh device memory with 0xCD: a vector that initialized its elements
  // (as thrust::device_vector does) would show zeros. On a GPU the contents are unspecified.
  if (rmm::test::current_backend() != rmm::test::backend::emulator) {
    GTEST_SKIP() << "fresh memory has a known pattern only on the emulator";
  }
  rmm::device_uvector<std::uint32_t> v(64, stream_, rmm::mr::cuda_memory_resource{});
  EXPECT_EQ(v.element(0, stream_), 0xCDCDCDCDU);
  EXPECT_EQ(v.back_element(stream_), 0xCDCDCDCDU);
}

TEST_F(DeviceUvector, SetAndGetElementsSynchronously)
{
  rmm::device_uvector<std::int64_t> v(100, stream_);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v.set_element(i, static_cast<std::int64_t>(i * i) - 50, stream_);  // temporaries are fine here
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v.element(i, stream_), static_cast<std::int64_t>(i * i) - 50);
  }
  EXPECT_EQ(v.front_element(stream_), -50);
  EXPECT_EQ(v.back_element(stream_), 99 * 99 - 50);
}

TEST_F(DeviceUvector, SetElementsAsynchronously)
{
  rmm::device_uvector<point> v(3, stream_);
  point const a{1.5F, -2.0F, 7};
  point const b{0.0F, 0.0F, 0};
  v.set_element_async(0, a, stream_);
  v.set_element_async(1, b, stream_);
  v.set_element_to_zero_async(2, stream_);
  stream_.synchronize();
  EXPECT_EQ(v.element(0, stream_), a);
  EXPECT_EQ(v.element(1, stream_), b);
  EXPECT_EQ(v.element(2, stream_), (point{0.0F, 0.0F, 0}));
}

TEST_F(DeviceUvector, IntegralZeroAndBoolUseMemset)
{
  rmm::device_uvector<std::int32_t> ints(2, stream_);
  int const zero  = 0;
  int const seven = 7;
  ints.set_element_async(0, zero, stream_);
  ints.set_element_async(1, seven, stream_);
  rmm::device_uvector<bool> flags(2, stream_);
  bool const yes = true;
  bool const no  = false;
  flags.set_element_async(0, yes, stream_);
  flags.set_element_async(1, no, stream_);
  stream_.synchronize();
  EXPECT_EQ(to_host_vector(ints), (std::vector<std::int32_t>{0, 7}));
  EXPECT_TRUE(flags.element(0, stream_));
  EXPECT_FALSE(flags.element(1, stream_));
}

TEST_F(DeviceUvector, NegativeZeroKeepsItsSign)
{
  // -0.0 == 0.0, but its bytes are not zero: floating-point values are always copied.
  rmm::device_uvector<double> v(1, stream_);
  double const negative_zero = -0.0;
  v.set_element_async(0, negative_zero, stream_);
  double const back = v.element(0, stream_);
  EXPECT_TRUE(std::signbit(back));
}

TEST_F(DeviceUvector, OutOfRangeAccessThrowsAndSaysWhy)
{
  rmm::device_uvector<int> v(4, stream_);
  int const one = 1;
  EXPECT_THROW((void)v.element(4, stream_), rmm::out_of_range);
  EXPECT_THROW(v.set_element(4, 1, stream_), rmm::out_of_range);
  EXPECT_THROW((void)v.element(4, stream_), std::out_of_range) << "and so a std::out_of_range";
  EXPECT_THROW(v.set_element_async(100, one, stream_), rmm::out_of_range);
  EXPECT_THROW(v.set_element_to_zero_async(4, stream_), rmm::out_of_range);
  try {
    (void)v.element(9, stream_);
  } catch (rmm::out_of_range const& e) {
    EXPECT_NE(std::string{e.what()}.find("index 9 is out of range for size 4"), std::string::npos) << e.what();
  }
}

TEST_F(DeviceUvector, HugeSizeIsRejectedWithoutWrapping)
{
  auto const too_many = std::numeric_limits<std::size_t>::max() / 2;
  EXPECT_THROW((rmm::device_uvector<std::int64_t>(too_many, stream_)), rmm::invalid_argument) << "as RMM's";
}

TEST_F(DeviceUvector, ResizeReserveAndShrinkKeepContents)
{
  std::vector<std::int32_t> host(50);
  std::iota(host.begin(), host.end(), 100);
  rmm::device_uvector<std::int32_t> v(50, stream_);
  from_host_vector(v, host);

  v.resize(20, stream_);  // shrinking keeps the allocation
  EXPECT_EQ(v.size(), 20U);
  EXPECT_EQ(v.capacity(), 50U);

  v.reserve(500, stream_);
  EXPECT_EQ(v.capacity(), 500U);
  EXPECT_EQ(v.size(), 20U);

  v.resize(300, stream_);  // within capacity: no reallocation
  EXPECT_EQ(v.capacity(), 500U);
  v.resize(20, stream_);
  v.shrink_to_fit(stream_);
  EXPECT_EQ(v.capacity(), 20U);
  stream_.synchronize();
  EXPECT_EQ(to_host_vector(v), std::vector<std::int32_t>(host.begin(), host.begin() + 20));
}

TEST_F(DeviceUvector, DeepCopyUsesTheGivenStreamAndResource)
{
  std::vector<std::uint16_t> host(1000);
  std::iota(host.begin(), host.end(), std::uint16_t{3});
  rmm::device_uvector<std::uint16_t> original(host.size(), stream_);
  from_host_vector(original, host);

  rmm::cuda_stream other;
  rmm::mr::managed_memory_resource managed;
  rmm::device_uvector<std::uint16_t> copy(original, other, managed);
  other.synchronize();
  EXPECT_NE(copy.data(), original.data());
  EXPECT_EQ(copy.stream(), other.view());
  EXPECT_TRUE(copy.memory_resource() == rmm::device_async_resource_ref{managed});
  EXPECT_EQ(to_host_vector(copy), host);
}

TEST_F(DeviceUvector, MoveTransfersTheMemory)
{
  rmm::device_uvector<int> a(10, stream_);
  a.set_element(3, 33, stream_);
  auto* const data = a.data();
  rmm::device_uvector<int> b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.size(), 10U);
  EXPECT_TRUE(a.is_empty());  // NOLINT: the moved-from state is specified (empty)
  rmm::device_uvector<int> c(1, stream_);
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(c.element(3, stream_), 33);
}

TEST_F(DeviceUvector, ReleaseHandsOverTheBuffer)
{
  rmm::device_uvector<double> v(16, stream_);
  auto* const data          = v.data();
  rmm::device_buffer buffer = v.release();
  EXPECT_EQ(buffer.data(), data);
  EXPECT_EQ(buffer.size(), 16 * sizeof(double));
  EXPECT_EQ(buffer.stream(), stream_.view());
  EXPECT_TRUE(v.is_empty());
  EXPECT_EQ(v.data(), nullptr);
}

TEST_F(DeviceUvector, SpansViewTheElements)
{
  rmm::device_uvector<float> v(12, stream_);
  cuda::std::span<float> span = v;
  EXPECT_EQ(span.data(), v.data());
  EXPECT_EQ(span.size(), 12U);
  auto const& cv                          = v;
  cuda::std::span<float const> const_span = cv;
  EXPECT_EQ(const_span.data(), v.data());
  EXPECT_EQ(const_span.size(), 12U);
}

TEST_F(DeviceUvector, SetStreamOrdersLaterWork)
{
  rmm::device_uvector<int> v(8, stream_);
  rmm::cuda_stream other;
  stream_.synchronize();
  v.set_stream(other);
  EXPECT_EQ(v.stream(), other.view());
  v.resize(1000, other);
  EXPECT_EQ(v.stream(), other.view());
}

TEST_F(DeviceUvector, AllocatesFromTheGivenPool)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 1 << 20};
  {
    rmm::device_uvector<std::int32_t> v(1000, stream_, pool);
    EXPECT_EQ(pool.statistics().allocated_bytes, 4096U);  // 4000 bytes, rounded to 256
    v.resize(2000, stream_);
    EXPECT_EQ(pool.statistics().allocated_bytes, 8192U);
  }
  EXPECT_EQ(pool.statistics().allocated_bytes, 0U);
}

}  // namespace

namespace {

struct alignas(512) over_aligned {
  char byte;
};

// As RMM: the elements' alignment is asked of the resource, so a type aligned beyond what any
// resource gives is refused rather than handed misaligned memory.
TEST(DeviceUvectorAlignment, AnOverAlignedElementTypeIsBadAlloc)
{
  rmm::cuda_stream stream;
  rmm::device_uvector<double> doubles(4, stream);
  EXPECT_EQ(doubles.size(), 4U);
  EXPECT_THROW((rmm::device_uvector<over_aligned>(1, stream)), rmm::bad_alloc);
  rmm::device_uvector<over_aligned> none(0, stream);
  EXPECT_TRUE(none.is_empty()) << "an empty vector asks for no memory";
}

}  // namespace
