// SPDX-License-Identifier: Apache-2.0
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>
#include <type_traits>

namespace {

static_assert(!std::is_copy_constructible_v<rmm::cuda_stream>);
static_assert(std::is_nothrow_move_constructible_v<rmm::cuda_stream>);
static_assert(!std::is_constructible_v<rmm::cuda_stream_view, int>);
static_assert(!std::is_constructible_v<rmm::cuda_stream_view, std::nullptr_t>);

TEST(CudaStreamView, DefaultStreams)
{
  EXPECT_TRUE(rmm::cuda_stream_default.is_default());
  EXPECT_TRUE(rmm::cuda_stream_legacy.is_default());
  EXPECT_FALSE(rmm::cuda_stream_per_thread.is_default());
  EXPECT_TRUE(rmm::cuda_stream_per_thread.is_per_thread_default());
  EXPECT_FALSE(rmm::cuda_stream_default.is_per_thread_default());
  EXPECT_EQ(rmm::cuda_stream_default.value(), cudaStream_t{});
  EXPECT_EQ(rmm::cuda_stream_legacy.value(), cudaStreamLegacy);
}

TEST(CudaStreamView, ConvertsToAndFromStreamRef)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view view = stream;
  cuda::stream_ref ref       = view;
  EXPECT_EQ(ref.get(), stream.value());
  rmm::cuda_stream_view back{ref};
  EXPECT_EQ(back, view);
  EXPECT_NE(back, rmm::cuda_stream_default);
  std::ostringstream os;
  os << view;
  EXPECT_FALSE(os.str().empty());
}

TEST(CudaStream, SynchronizeWaitsForQueuedWork)
{
  rmm::cuda_stream stream;
  std::atomic<bool> done{false};
  auto const slow = [](void* flag) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    static_cast<std::atomic<bool>*>(flag)->store(true);
  };
  RMM_CUDA_TRY(cudaLaunchHostFunc(stream.value(), slow, &done));
  stream.synchronize();
  EXPECT_TRUE(done.load());
  stream.synchronize_no_throw();
}

TEST(CudaStream, FlagsReachTheStream)
{
  rmm::cuda_stream blocking;
  rmm::cuda_stream non_blocking{rmm::cuda_stream::flags::non_blocking};
  unsigned int flags{};
  RMM_CUDA_TRY(cudaStreamGetFlags(blocking.value(), &flags));
  EXPECT_EQ(flags, static_cast<unsigned int>(cudaStreamDefault));
  RMM_CUDA_TRY(cudaStreamGetFlags(non_blocking.value(), &flags));
  EXPECT_EQ(flags, static_cast<unsigned int>(cudaStreamNonBlocking));
}

TEST(CudaStream, MoveTransfersOwnership)
{
  rmm::cuda_stream a;
  ASSERT_TRUE(a.is_valid());
  auto const handle = a.value();
  rmm::cuda_stream b{std::move(a)};
  EXPECT_FALSE(a.is_valid());  // NOLINT: checking the moved-from state is the point
  EXPECT_TRUE(b.is_valid());
  EXPECT_EQ(b.value(), handle);
  EXPECT_NE(b.view(), rmm::cuda_stream_default);
  b.synchronize();
}

TEST(CudaStreamPool, RejectsAnEmptyPool) { EXPECT_THROW(rmm::cuda_stream_pool{0}, rmm::logic_error); }

TEST(CudaStreamPool, HandsOutEveryStreamRoundRobin)
{
  rmm::cuda_stream_pool pool{4};
  EXPECT_EQ(pool.get_pool_size(), 4U);
  std::set<cudaStream_t> seen;
  for (int i = 0; i < 4; ++i) { seen.insert(pool.get_stream().value()); }
  EXPECT_EQ(seen.size(), 4U);
  EXPECT_EQ(seen.count(pool.get_stream().value()), 1U);  // wraps around
  EXPECT_EQ(pool.get_stream(1), pool.get_stream(5));
  EXPECT_NE(pool.get_stream(1), pool.get_stream(2));
  EXPECT_EQ(pool.get_stream(rmm::cuda_stream_pool::default_size * 3 + 1), pool.get_stream(1 + 12));
}

TEST(CudaStreamPool, ThreadsShareThePoolSafely)
{
  rmm::cuda_stream_pool pool{3, rmm::cuda_stream::flags::non_blocking};
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        auto stream = pool.get_stream();
        if (stream.value() != nullptr) { ++ok; }
      }
      pool.get_stream().synchronize();
    });
  }
  for (auto& t : threads) { t.join(); }
  EXPECT_EQ(ok.load(), 800);
}

}  // namespace
