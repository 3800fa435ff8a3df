// SPDX-License-Identifier: Apache-2.0
// limiting_resource_adaptor: the cap, its rounding and message, and exactness under many threads.
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

using rmm::mr::limiting_resource_adaptor;

TEST(LimitingAdaptor, RefusesWhatWouldPassTheLimitAndSaysWhy)
{
  rmm::mr::statistics_resource_adaptor upstream{rmm::mr::cuda_memory_resource{}};
  limiting_resource_adaptor mr{upstream, 1 << 20};
  void* a = mr.allocate_sync(768 << 10);
  EXPECT_EQ(mr.get_allocated_bytes(), std::size_t{768} << 10);
  try {
    (void)mr.allocate_sync(512 << 10);
    FAIL() << "allocation past the limit succeeded";
  } catch (rmm::out_of_memory const& e) {
    std::string const message = e.what();
    EXPECT_NE(message.find("limiting_resource_adaptor"), std::string::npos) << message;
    EXPECT_NE(message.find("512.00 KiB"), std::string::npos) << message;
    EXPECT_NE(message.find("1.00 MiB"), std::string::npos) << message;
    EXPECT_NE(message.find("768.00 KiB"), std::string::npos) << message;
  }
  EXPECT_EQ(upstream.get_allocations_counter().total, 1) << "the refused request must not reach the upstream";
  void* b = mr.allocate_sync(256 << 10);  // exactly up to the limit
  EXPECT_EQ(mr.get_allocated_bytes(), std::size_t{1} << 20);
  mr.deallocate_sync(a, 768 << 10);
  mr.deallocate_sync(b, 256 << 10);
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
  EXPECT_EQ(mr.get_allocation_limit(), std::size_t{1} << 20);
}

TEST(LimitingAdaptor, ChargesSizesRoundedUpToTheAlignment)
{
  limiting_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, 4096, 1024};
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) { blocks.push_back(mr.allocate_sync(1)); }
  EXPECT_EQ(mr.get_allocated_bytes(), 4096U);
  EXPECT_THROW((void)mr.allocate_sync(1), rmm::out_of_memory);
  for (void* p : blocks) { mr.deallocate_sync(p, 1); }
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
}

TEST(LimitingAdaptor, RejectsAnAlignmentThatIsNotAPowerOfTwo)
{
  EXPECT_THROW((limiting_resource_adaptor{rmm::mr::cuda_memory_resource{}, 4096, 1000}), rmm::logic_error);
}

TEST(LimitingAdaptor, AnUpstreamFailureGivesTheChargeBack)
{
  limiting_resource_adaptor inner{rmm::mr::cuda_memory_resource{}, 1 << 20};
  limiting_resource_adaptor outer{inner, 8 << 20};
  EXPECT_THROW((void)outer.allocate_sync(2 << 20), rmm::out_of_memory);
  EXPECT_EQ(outer.get_allocated_bytes(), 0U);
}

TEST(LimitingAdaptor, TheLimitHoldsExactlyUnderManyThreads)
{
  constexpr std::size_t block = 64 << 10;
  constexpr std::size_t limit = 10 * block;
  rmm::mr::statistics_resource_adaptor upstream{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  limiting_resource_adaptor mr{upstream, limit};
  std::atomic<int> refused{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 16; ++t) {
    workers.emplace_back([&] {
      rmm::cuda_stream stream;
      for (int i = 0; i < 500; ++i) {
        try {
          void* p = mr.allocate(stream, block);
          EXPECT_LE(mr.get_allocated_bytes(), limit);
          mr.deallocate(stream, p, block);
        } catch (rmm::out_of_memory const&) {
          ++refused;
        }
      }
      stream.synchronize();
    });
  }
  for (auto& w : workers) { w.join(); }
  EXPECT_LE(upstream.get_bytes_counter().peak, static_cast<std::int64_t>(limit));
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
  EXPECT_EQ(upstream.get_allocations_counter().total + refused.load(), 16 * 500);
}

}  // namespace
