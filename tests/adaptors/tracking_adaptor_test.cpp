// tracking_resource_adaptor: the record of outstanding allocations, stacks, the report, and
// frees that do not match the record.
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace {

using rmm::mr::tracking_resource_adaptor;

TEST(TrackingAdaptor, RecordsOutstandingAllocationsUntilFreed)
{
  tracking_resource_adaptor mr{rmm::mr::cuda_memory_resource{}};
  void* a = mr.allocate_sync(1000);
  void* b = mr.allocate_sync(3000);
  auto outstanding = mr.get_outstanding_allocations();
  ASSERT_EQ(outstanding.size(), 2U);
  EXPECT_EQ(outstanding.at(a).allocation_size, 1000U);
  EXPECT_EQ(outstanding.at(b).allocation_size, 3000U);
  EXPECT_FALSE(outstanding.at(a).stack.has_value()) << "stacks were not asked for";
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
  void* a = mr.allocate_sync(4096);
  auto const outstanding = mr.get_outstanding_allocations();
  ASSERT_TRUE(outstanding.at(a).stack.has_value());
  EXPECT_GT(outstanding.at(a).stack->depth(), 2U);
  auto const report = mr.get_outstanding_allocations_str();
  EXPECT_NE(report.find("Outstanding allocations: 1 (4.00 KiB (4096 bytes))"), std::string::npos) << report;
  EXPECT_NE(report.find(fmt::format("{}: 4.00 KiB", fmt::ptr(a))), std::string::npos) << report;
  // The test is linked with -rdynamic (ENABLE_EXPORTS), so frames in rmm (linked in) have names.
  EXPECT_NE(report.find("tracking_resource_adaptor::do_allocate"), std::string::npos) << report;
  EXPECT_NE(report.find("#0 "), std::string::npos) << report;
  mr.deallocate_sync(a, 4096);
  EXPECT_NE(mr.get_outstanding_allocations_str().find("Outstanding allocations: 0"), std::string::npos);
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
  EXPECT_NE(log.find(fmt::format("free of {} (512 B) which this resource did not allocate or already freed",
                                 fmt::ptr(a))),
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

}  // namespace
