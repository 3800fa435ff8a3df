// SPDX-License-Identifier: Apache-2.0
// The allocation logs of real PyTorch and CuPy runs (tests/data/traces) replay through every
// resource without error; a pool that starts empty stays close to the live bytes.

#include "allocation_log.hpp"
#include "resource_factories.hpp"
#include "sequential_replay.hpp"

#include <rmm/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rmm::test {
namespace {

std::string trace_path(char const* name) { return std::string{RMM_TRACE_DIR} + "/" + name; }

std::vector<rmm::trace::event> const& resnet50()
{
  static auto const events = rmm::trace::read_log(trace_path("torch_resnet50.csv.gz"));
  return events;
}
std::vector<rmm::trace::event> const& cupy_mix()
{
  static auto const events = rmm::trace::read_log(trace_path("cupy_mix.csv.gz"));
  return events;
}

std::size_t largest_request(std::vector<rmm::trace::event> const& events)
{
  std::size_t largest = 0;
  for (auto const& e : events) { largest = std::max(largest, e.size); }
  return largest;
}

/// The peak of the log's live bytes and, separately, of its live allocations.
struct live_peaks {
  std::size_t bytes{0};
  std::size_t count{0};
};

live_peaks peaks(std::vector<rmm::trace::event> const& events)
{
  std::unordered_map<std::uintptr_t, std::size_t> live;
  std::size_t bytes = 0;
  live_peaks peak{};
  for (auto const& e : events) {
    if (e.kind == rmm::trace::action::allocate) {
      live[e.pointer] = e.size;
      bytes += e.size;
      peak.bytes = std::max(peak.bytes, bytes);
      peak.count = std::max(peak.count, live.size());
    } else if (e.kind == rmm::trace::action::free) {
      bytes -= live[e.pointer];
      live.erase(e.pointer);
    }
  }
  return peak;
}

template <class Factory>
class TraceReplay : public ::testing::Test {
 protected:
  void SetUp() override
  {
    RMM_CUDA_TRY(cudaSetDevice(0));
    if (auto const reason = Factory::unavailable_reason(); !reason.empty()) { GTEST_SKIP() << reason; }
  }

  void replay(std::vector<rmm::trace::event> const& events)
  {
    auto run = [&](auto mr) {
      auto const result = rmm::trace::replay_sequential(events, mr);
      auto const allocs = std::count_if(events.begin(), events.end(),
                                        [](auto const& e) { return e.kind == rmm::trace::action::allocate; });
      EXPECT_EQ(result.allocations, static_cast<std::size_t>(allocs));
      EXPECT_GT(result.peak_live_bytes, 0U);
    };
    // Resources with a fixed capacity get one that fits the log.
    auto const peak     = peaks(events);
    auto const capacity = 2 * peak.bytes;
    if constexpr (std::is_same_v<Factory, fixed_size_factory>) {
      // One block size for every request of this log: each live allocation takes a whole block.
      auto const block  = largest_request(events);
      std::size_t free  = 0;
      std::size_t total = 0;
      RMM_CUDA_TRY(cudaMemGetInfo(&free, &total));
      if (peak.count * block > free) {
        GTEST_SKIP() << "blocks of the largest request (" << block << " bytes) for the log's " << peak.count
                     << " live allocations need " << peak.count * block << " bytes; the device has " << free << " free";
      }
      run(rmm::mr::fixed_size_memory_resource{rmm::mr::cuda_memory_resource{}, block, 8});
    } else if constexpr (std::is_same_v<Factory, pool_bounded_factory>) {
      run(rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, std::size_t{64} << 20, capacity});
    } else if constexpr (std::is_same_v<Factory, arena_factory>) {
      run(rmm::mr::arena_memory_resource{rmm::mr::cuda_memory_resource{}, capacity});
    } else {
      run(Factory::make());
    }
  }
};

TYPED_TEST_SUITE(TraceReplay, all_resource_factories, factory_names);

TYPED_TEST(TraceReplay, TorchResnet50) { this->replay(resnet50()); }
TYPED_TEST(TraceReplay, CupyMix) { this->replay(cupy_mix()); }

/// Peak reserved over peak live of `log` replayed through a pool that starts empty.
double reserved_over_live(std::vector<rmm::trace::event> const& log, char const* name, rmm::mr::pool_growth growth)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 0, std::nullopt, growth};
  auto const result = rmm::trace::replay_sequential(log, pool, [&pool] { return pool.pool_size(); });
  auto const ratio  = static_cast<double>(result.peak_reserved_bytes) / static_cast<double>(result.peak_live_bytes);
  std::printf("%s: peak live %zu, peak reserved %zu, ratio %.3f\n", name, result.peak_live_bytes,
              result.peak_reserved_bytes, ratio);
  return ratio;
}

TEST(TraceReplayMemory, PoolStartingEmptyReservesAtMostTenPercentAboveLiveBytes)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  EXPECT_LE(reserved_over_live(resnet50(), "resnet50", rmm::mr::pool_growth::automatic), 1.10);
}

TEST(TraceReplayMemory, ARemappingPoolHoldsAtMostTenPercentAboveLiveBytesOnBothLogs)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  // The CuPy log fragments a pool most (large requests among many small ones); free granules left
  // in the middle move to the end instead of the pool mapping more (1.14 without moving them).
  EXPECT_LE(reserved_over_live(resnet50(), "resnet50", rmm::mr::pool_growth::remapping), 1.10);
  EXPECT_LE(reserved_over_live(cupy_mix(), "cupy_mix", rmm::mr::pool_growth::remapping), 1.10);
}

TEST(AllocationLog, ReadsBothShippedLogs)
{
  EXPECT_EQ(resnet50().size(), 11135U);
  EXPECT_EQ(cupy_mix().front().kind, rmm::trace::action::allocate);
  EXPECT_EQ(resnet50().front().pointer, 0x7f2107e00000U);
  EXPECT_EQ(resnet50().front().size, 37632U);
  EXPECT_EQ(resnet50().front().line, 2U);
}

TEST(AllocationLog, MalformedRowsNameTheLine)
{
  auto const expect_error = [](std::string const& text, std::string const& fragment) {
    try {
      (void)rmm::trace::parse_log(text, "log.csv");
      ADD_FAILURE() << "accepted: " << text;
    } catch (rmm::trace::parse_error const& e) {
      EXPECT_NE(std::string{e.what()}.find(fragment), std::string::npos) << e.what();
    }
  };
  std::string const header = "Thread,Time,Action,Pointer,Size,Stream\n";
  expect_error("", "empty log");
  expect_error("Thread,Action\n", "log.csv:1: expected the header");
  expect_error(header + "1,00:00:01.000000,allocate,0x10,256\n", "log.csv:2: 5 column(s), expected 6");
  expect_error(header + "1,00:00:01.000000,allocate,0x10,256,0x0,extra\n", "log.csv:2: more than 6 columns");
  expect_error(header + "1,00:00:01.000000,reserve,0x10,256,0x0\n", "log.csv:2: unknown action 'reserve'");
  expect_error(header + "1,00:00:01.000000,allocate,0xZZ,256,0x0\n", "column Pointer is '0xZZ'");
  expect_error(header + "1,00:00:01.000000,allocate,0x10,-5,0x0\n", "column Size is '-5'");
  expect_error(header + "1,yesterday,allocate,0x10,5,0x0\n", "column Time is 'yesterday'");
  expect_error(header + "x,00:00:01.000000,allocate,0x10,5,0x0\n", "column Thread is 'x'");
  auto const ok = rmm::trace::parse_log(header + "7,01:02:03.500000,allocate failure,0x0,64,0x1f\r\n", "log.csv");
  ASSERT_EQ(ok.size(), 1U);
  EXPECT_EQ(ok[0].kind, rmm::trace::action::allocate_failure);
  EXPECT_DOUBLE_EQ(ok[0].time_seconds, 3723.5);
  EXPECT_EQ(ok[0].stream, 0x1fU);
}

TEST(AllocationLog, ReplayRejectsAFreeOfAnUnknownPointer)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto const events =
    rmm::trace::parse_log("Thread,Time,Action,Pointer,Size,Stream\n1,00:00:01.000000,free,0x100,256,0x0\n", "log.csv");
  rmm::mr::cuda_memory_resource cuda;
  try {
    (void)rmm::trace::replay_sequential(events, cuda);
    FAIL();
  } catch (rmm::trace::replay_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("line 2: free of 0x100"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rmm::test
