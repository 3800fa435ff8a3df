// SPDX-License-Identifier: Apache-2.0
// tracking_resource_adaptor: the record of outstanding allocations, stacks, the report, and
// frees that do not match the record.
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

namespace {

using rmm::mr::tracking_resource_adaptor;

TEST(TrackingAdaptor, RecordsOutstandingAllocationsUntilFreed)
{
  tracking_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
  void* a          = mr.allocate_sync(1000);
  void* b          = mr.allocate_sync(3000);
  auto outstanding = mr.get_outstanding_allocations();
  ASSERT_EQ(outstanding.size(), 2U);
  EXPECT_EQ(outstanding.at(a).allocation_size, 1000U);
  EXPECT_EQ(outstanding.at(b).allocation_size, 3000U);
  EXPECT_EQ(outstanding.at(a).strace, nullptr) << "stacks were not asked for";
  EXPECT_EQ(mr.get_allocated_bytes(), 4000U);
  mr.deallocate_sync(a, 1000);
  outstanding = mr.get_outstanding_allocations();
  ASSERT_EQ(outstanding.size(), 1U);
  EXPECT_TRUE(outstanding.contains(b));
  mr.deallocate_sync(b, 3000);
  EXPECT_TRUE(mr.get_outstanding_allocations().empty());
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
}

TEST(TrackingAdaptor, TheReportListsEveryAllocationWithItsStack)
{
  tracking_resource_adaptor mr{rmm::mr::cuda_memory_resource{}, true};
  void* a                = mr.allocate_sync(4096);
  auto const outstanding = mr.get_outstanding_allocations();
  ASSERT_NE(outstanding.at(a).strace, nullptr);
  EXPECT_GT(outstanding.at(a).strace->depth(), 2U);
  auto const report = mr.get_outstanding_allocations_str();
  EXPECT_NE(report.find("Outstanding allocations: 1 (4.00 KiB (4096 bytes))"), std::string::npos) << report;
  EXPECT_NE(report.find(fmt::format("{}: 4.00 KiB", fmt::ptr(a))), std::string::npos) << report;
  // The test is linked with -rdynamic (ENABLE_EXPORTS), so frames in rmm (linked in) have names.
  EXPECT_NE(report.find("tracking_resource_adaptor::allocate_in"), std::string::npos) << report;
  EXPECT_NE(report.find("#0 "), std::string::npos) << report;
  mr.deallocate_sync(a, 4096);
  EXPECT_EQ(mr.get_outstanding_allocations_str(), "") << "nothing outstanding: an empty report, as RMM's";
}

TEST(TrackingAdaptor, AFreeOfAnUnknownPointerIsReportedAndNotPassedOn)
{
  rmm::mr::statistics_resource_adaptor upstream{rmm::mr::cuda_memory_resource{}};
  tracking_resource_adaptor mr{upstream};
  void* a = mr.allocate_sync(512);
  int local{};
  testing::internal::CaptureStderr();
  mr.deallocate_sync(&local, 64);
  mr.deallocate_sync(a, 512);
  mr.deallocate_sync(a, 512);  // twice
  auto const log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(mr.get_unknown_frees(), 2U);
  EXPECT_NE(log.find(fmt::format("free of {} (64 B) which this resource did not allocate", fmt::ptr(&local))),
            std::string::npos)
    << log;
  EXPECT_NE(
    log.find(fmt::format("free of {} (512 B) which this resource did not allocate or already freed", fmt::ptr(a))),
    std::string::npos)
    << log;
  EXPECT_EQ(upstream.get_allocations_counter().value, 0) << "only the one real free reached the upstream";
  EXPECT_EQ(upstream.get_allocations_counter().total, 1);
}

TEST(TrackingAdaptor, AFreeWithTheWrongSizeIsReportedAndFreesWhatWasAllocated)
{
  rmm::mr::statistics_resource_adaptor upstream{rmm::mr::cuda_memory_resource{}};
  tracking_resource_adaptor mr{upstream};
  void* a = mr.allocate_sync(2048);
  testing::internal::CaptureStderr();
  mr.deallocate_sync(a, 100);
  auto const log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(mr.get_size_mismatches(), 1U);
  EXPECT_NE(log.find(fmt::format("free of {} with size 100 B but it was allocated with 2.00 KiB", fmt::ptr(a))),
            std::string::npos)
    << log;
  EXPECT_EQ(upstream.get_bytes_counter().value, 0) << "the upstream got back the size it handed out";
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
}

TEST(TrackingAdaptor, ManyThreadsKeepAnExactRecord)
{
  tracking_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
  std::vector<std::thread> workers;
  std::vector<std::vector<void*>> kept(8);
  for (int t = 0; t < 8; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        void* p = mr.allocate_sync(256);
        if (i % 2 == 0) {
          kept[t].push_back(p);
        } else {
          mr.deallocate_sync(p, 256);
        }
      }
    });
  }
  for (auto& w : workers) { w.join(); }
  auto const outstanding = mr.get_outstanding_allocations();
  EXPECT_EQ(outstanding.size(), 800U);
  EXPECT_EQ(mr.get_allocated_bytes(), 800U * 256);
  for (auto const& list : kept) {
    for (void* p : list) {
      EXPECT_TRUE(outstanding.contains(p));
      mr.deallocate_sync(p, 256);
    }
  }
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
}

TEST(TrackingAdaptor, ZeroByteAllocationsAtOneAddressAreEachRecordedAndFreed)
{
  // CUDA hands out null for every zero-byte request: two allocations, one address.
  rmm::mr::statistics_resource_adaptor upstream{rmm::mr::cuda_memory_resource{}};
  tracking_resource_adaptor mr{upstream};
  void* a    = mr.allocate_sync(0);
  void* b    = mr.allocate_sync(0);
  void* real = mr.allocate_sync(512);
  ASSERT_EQ(a, b) << "the premise: the upstream gives zero-byte requests one address";
  auto const report = mr.get_outstanding_allocations_str();
  EXPECT_NE(report.find("Outstanding allocations: 3 (512 B"), std::string::npos) << report;
  EXPECT_EQ(mr.get_outstanding_allocations().size(), 2U) << "by address: the zero-byte ones share one entry";
  EXPECT_EQ(mr.get_outstanding_allocations().at(a).allocation_size, 0U);

  testing::internal::CaptureStderr();
  mr.deallocate_sync(a, 0);
  mr.deallocate_sync(b, 0);
  auto const log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log, "") << "freeing both zero-byte allocations is not an error";
  EXPECT_EQ(mr.get_unknown_frees(), 0U);
  EXPECT_EQ(mr.get_size_mismatches(), 0U);
  EXPECT_EQ(upstream.get_allocations_counter().value, 1) << "both zero-byte frees reached the upstream";
  EXPECT_EQ(upstream.get_allocations_counter().total, 3);
  ASSERT_EQ(mr.get_outstanding_allocations().size(), 1U);
  EXPECT_TRUE(mr.get_outstanding_allocations().contains(real));

  testing::internal::CaptureStderr();
  mr.deallocate_sync(a, 0);  // a third time: one more free than allocations
  (void)testing::internal::GetCapturedStderr();
  EXPECT_EQ(mr.get_unknown_frees(), 1U);
  EXPECT_EQ(upstream.get_allocations_counter().value, 1) << "the extra free did not reach the upstream";
  mr.deallocate_sync(real, 512);
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
  EXPECT_TRUE(mr.get_outstanding_allocations().empty());
}

TEST(TrackingAdaptor, AZeroByteAllocationSharingAnAddressWithARealOneKeepsBothRecords)
{
  // An upstream that answers zero-byte requests with the address its next real block will have.
  struct shared_address {
    rmm::mr::cuda_memory_resource cuda;
    void* next{nullptr};
  } state;
  state.next = state.cuda.allocate_sync(4096);
  rmm::mr::callback_memory_resource upstream{[](std::size_t bytes, rmm::cuda_stream_view, void* arg) -> void* {
                                               auto* s = static_cast<shared_address*>(arg);
                                               return bytes == 0 ? s->next : std::exchange(s->next, nullptr);
                                             },
                                             [](void*, std::size_t, rmm::cuda_stream_view, void*) {}, &state, &state};
  tracking_resource_adaptor mr{upstream};
  void* zero = mr.allocate_sync(0);
  void* real = mr.allocate_sync(4096);
  ASSERT_EQ(zero, real);
  EXPECT_EQ(mr.get_outstanding_allocations().at(real).allocation_size, 4096U) << "the real block is listed by address";
  testing::internal::CaptureStderr();
  mr.deallocate_sync(real, 4096);
  mr.deallocate_sync(zero, 0);
  auto const log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log, "");
  EXPECT_EQ(mr.get_unknown_frees(), 0U);
  EXPECT_EQ(mr.get_size_mismatches(), 0U);
  EXPECT_TRUE(mr.get_outstanding_allocations().empty());
  state.cuda.deallocate_sync(real, 4096);
}

}  // namespace
