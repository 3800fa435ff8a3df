// SPDX-License-Identifier: Apache-2.0
// The physical cache: allocations the program mapped itself (cuMemCreate) and released are handed
// out again for a cuMemCreate of the same size and properties, and only once nothing can reach
// their memory any more: not while mapped, retained or exported.

#include "shim_runner.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace rmm::test {
namespace {

/// Runs a scenario with the physical cache switched on, unless `environment` says otherwise.
outcome run_physical(std::string const& scenario, std::map<std::string, std::string> environment = {})
{
  environment.emplace("RMM_SHIM_PHYSICAL_CACHE", "true");
  return run_program(RMM_PHYSICAL_CLIENT, scenario, std::move(environment));
}

TEST(PhysicalCache, AReleasedAllocationIsHandedOutAgainOnceUnmapped)
{
  auto const r = run_physical("reuse");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("not_reused_while_mapped"), "1") << r.output;
  EXPECT_EQ(r.value("still_usable_after_release"), "1") << "a released allocation's mapping still works";
  EXPECT_EQ(r.value("not_reused_for_another_size"), "1");
  EXPECT_EQ(r.value("reused_once_unmapped"), "1") << r.output;
  EXPECT_EQ(r.value("reused_handle_usable"), "1");
  EXPECT_EQ(r.value("reused_after_address_free"), "1") << "freeing the reservation unmaps: " << r.output;
  EXPECT_EQ(r.value("release_twice_refused"), "1") << "a handle the program released already";
  EXPECT_EQ(r.reported("cache_hits"), 2) << r.report;
  EXPECT_EQ(r.reported("creates"), 5) << r.report;
}

TEST(PhysicalCache, ARetainedReferenceKeepsTheAllocationTheProgramsUntilReleased)
{
  auto const r = run_physical("retain");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("retained_same_handle"), "1") << r.output;
  EXPECT_EQ(r.value("not_reused_while_retained"), "1") << r.output;
  EXPECT_EQ(r.value("properties_of_retained"), "1") << r.output;
  EXPECT_EQ(r.value("reused_after_last_release"), "1") << r.output;
}

TEST(PhysicalCache, AnExportedAllocationIsNeverHandedOutAgain)
{
  auto const r = run_physical("exported");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("exported_not_reused"), "1") << r.output;
  EXPECT_EQ(r.reported("cache_hits"), 0) << r.report;
}

TEST(PhysicalCache, AReleasedHandleIsUsableWhileMappedAsNatively)
{
  for (char const* cache : {"false", "true"}) {
    auto const r = run_physical("released-handle", {{"RMM_SHIM_PHYSICAL_CACHE", cache}});
    ASSERT_EQ(r.status, 0) << "physical_cache = " << cache << ": " << r.output;
    // An H100's driver maps and exports it while its memory is still mapped.
    for (char const* call : {"map_while_mapped", "export_while_mapped"}) {
      EXPECT_EQ(r.value(call), "CUDA_SUCCESS") << call << " with physical_cache = " << cache << ": " << r.output;
    }
    EXPECT_EQ(r.value("new_allocation_usable"), "1") << r.output;
  }
}

// Without the cache, a released handle mapped nowhere is destroyed and a call on it is a use after
// free (an H100's driver crashed), as it is for one that escaped the cache; the cache keeps the
// others alive, and must refuse them rather than map or export memory it will hand out again.
TEST(PhysicalCache, AReleasedHandleMappedNowhereIsRefusedWhileTheCacheKeepsIt)
{
  auto const r = run_physical("released-handle-gone");
  ASSERT_EQ(r.status, 0) << r.output;
  for (char const* call : {"map_kept", "export_kept"}) {
    EXPECT_EQ(r.value(call), "CUDA_ERROR_INVALID_VALUE") << call << ": " << r.output;
  }
  EXPECT_EQ(r.value("new_allocation_usable"), "1") << r.output;
  EXPECT_EQ(r.reported("cache_hits"), 1) << "the kept handle, not the escaped one: " << r.report;
}

TEST(PhysicalCache, ReleasedAllocationsCountAsFreeAndGiveWayToALargerOne)
{
  auto const r = run_physical("out-of-memory", {{"RMM_EMU_DEVICE_MEMORY", "256MiB"}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("released_memory_counts_as_free"), "1") << r.output;
  EXPECT_EQ(r.value("large_allocation_served"), "1") << r.output;
}

TEST(PhysicalCache, ReleasedAllocationsGiveWayToTheShimsOwnStack)
{
  auto const r = run_physical("served-after-release", {{"RMM_EMU_DEVICE_MEMORY", "256MiB"}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("served_allocation"), "1") << r.output;
  EXPECT_EQ(r.reported("allocations"), 1) << r.report;
}

TEST(PhysicalCache, ALoopOfOneBufferAStepCreatesOnce)
{
  auto const r = run_physical("loop");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.reported("creates"), 100) << r.report;
  EXPECT_EQ(r.reported("cache_hits"), 99) << r.report;
  EXPECT_GT(r.reported("cached_bytes"), 0) << "the last one is kept at exit: " << r.report;
}

TEST(PhysicalCache, ASizeNoLongerAskedForGoesBackToTheDriver)
{
  auto const r = run_physical("expiry");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("expired_not_reused"), "1") << r.output;
  EXPECT_EQ(r.reported("cache_hits"), 599) << "the other size was reused all along: " << r.report;
}

TEST(PhysicalCache, OffByDefaultEveryCreateGoesToTheDriver)
{
  auto const r = run_program(RMM_PHYSICAL_CLIENT, "loop");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.reported("creates"), 100) << r.report;
  EXPECT_EQ(r.reported("cache_hits"), 0) << r.report;
  EXPECT_EQ(r.reported("cached_bytes"), 0) << r.report;
}

}  // namespace
}  // namespace rmm::test
