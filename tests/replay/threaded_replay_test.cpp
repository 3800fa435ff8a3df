// SPDX-License-Identifier: Apache-2.0
// The threaded replay: log order, one thread per logged thread, one stream per logged stream,
// logged failures replayed, unexpected failures stop the replay at their line, and a hand-over
// wakes only the thread of the next event.

#include "recording_resource.hpp"

#include "replay_plan.hpp"
#include "threaded_replay.hpp"

#include <allocation_log.hpp>

#include <rmm/error.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>

namespace {

using rmm::test::recording_resource;

rmm::replay::replay_plan plan_of(std::string const& rows)
{
  return rmm::replay::make_replay_plan(
    rmm::trace::parse_log("Thread,Time,Action,Pointer,Size,Stream\n" + rows, "log.csv"), "log.csv");
}

class ThreadedReplay : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
};

TEST_F(ThreadedReplay, EachLoggedThreadReplaysOnItsOwnThreadInLogOrder)
{
  // Thread 2 frees what thread 1 allocated just before, and the other way round.
  auto const plan = plan_of(
    "1,00:00:01.000000,allocate,0x100,100,0x0\n"
    "2,00:00:01.000001,free,0x100,100,0x0\n"
    "2,00:00:01.000002,allocate,0x200,200,0x0\n"
    "1,00:00:01.000003,free,0x200,200,0x0\n"
    "3,00:00:01.000004,allocate,0x300,300,0x0\n"
    "1,00:00:01.000005,allocate,0x400,400,0x0\n");
  recording_resource mr;
  auto const result = rmm::replay::replay_threaded(plan, mr);
  ASSERT_FALSE(result.failure.has_value()) << result.failure->message;
  EXPECT_EQ(result.events_replayed, 6U);

  auto const calls = mr.calls();
  ASSERT_EQ(calls.size(), 8U);  // six events, then the two allocations the log left live
  std::vector<std::pair<bool, std::size_t>> const expected{{true, 100},  {false, 100}, {true, 200},
                                                           {false, 200}, {true, 300},  {true, 400}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(calls[i].allocate, expected[i].first) << i;
    EXPECT_EQ(calls[i].bytes, expected[i].second) << i;
  }
  EXPECT_EQ(calls[1].ptr, calls[0].ptr);  // the free gets what the allocation returned
  EXPECT_EQ(calls[3].ptr, calls[2].ptr);
  // Logged thread 1 is one replaying thread, 2 and 3 are others, none of them the caller.
  EXPECT_EQ(calls[0].thread, calls[3].thread);
  EXPECT_EQ(calls[0].thread, calls[5].thread);
  EXPECT_EQ(calls[1].thread, calls[2].thread);
  std::set<std::thread::id> const threads{calls[0].thread, calls[1].thread, calls[4].thread,
                                          std::this_thread::get_id()};
  EXPECT_EQ(threads.size(), 4U);
  // What the log left live is freed afterwards, on the caller's thread.
  EXPECT_FALSE(calls[6].allocate);
  EXPECT_FALSE(calls[7].allocate);
  EXPECT_EQ(mr.live(), 0U);
}

TEST_F(ThreadedReplay, ManyThreadsKeepTheGlobalOrder)
{
  std::mt19937 random{42};
  std::string rows;
  std::vector<std::uintptr_t> live;
  std::vector<std::size_t> expected_sizes;
  std::uintptr_t next = 0x1000;
  for (int i = 0; i < 3000; ++i) {
    auto const thread = random() % 8;
    if (!live.empty() && random() % 2 == 0) {
      auto const pick = random() % live.size();
      auto const size = static_cast<std::size_t>(live[pick] % 4096 + 1);
      rows += fmt::format("{},00:00:01.000000,free,{:#x},{},0x0\n", thread, live[pick], size);
      expected_sizes.push_back(size);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(pick));
    } else {
      next += 0x1000 + random() % 4096;
      auto const size = static_cast<std::size_t>(next % 4096 + 1);
      rows += fmt::format("{},00:00:01.000000,allocate,{:#x},{},0x0\n", thread, next, size);
      expected_sizes.push_back(size);
      live.push_back(next);
    }
  }
  auto const plan = plan_of(rows);
  ASSERT_EQ(plan.thread_steps.size(), 8U);
  recording_resource mr;
  auto const result = rmm::replay::replay_threaded(plan, mr);
  ASSERT_FALSE(result.failure.has_value());
  auto const calls = mr.calls();
  ASSERT_GE(calls.size(), expected_sizes.size());
  std::map<void*, std::size_t> sizes;
  for (std::size_t i = 0; i < expected_sizes.size(); ++i) {
    ASSERT_EQ(calls[i].bytes, expected_sizes[i]) << "event " << i << " ran out of order";
    if (calls[i].allocate) {
      sizes[calls[i].ptr] = calls[i].bytes;
    } else {
      ASSERT_EQ(sizes.at(calls[i].ptr), calls[i].bytes) << "event " << i;
    }
  }
  EXPECT_EQ(mr.live(), 0U);
}

TEST_F(ThreadedReplay, EachLoggedStreamGetsAStreamOfItsOwn)
{
  auto const plan = plan_of(
    "1,00:00:01.000000,allocate,0x100,100,0x0\n"
    "1,00:00:01.000001,allocate,0x200,200,0xabc0\n"
    "1,00:00:01.000002,allocate,0x300,300,0xdef0\n"
    "1,00:00:01.000003,free,0x200,200,0xdef0\n"  // freed on another stream than its allocation's
    "1,00:00:01.000004,allocate,0x400,400,0x1\n"
    "1,00:00:01.000005,allocate,0x500,500,0x2\n"
    "1,00:00:01.000006,allocate,0x600,600,0xabc0\n");
  EXPECT_EQ(plan.logged_streams.size(), 5U);
  recording_resource mr;
  auto const result = rmm::replay::replay_threaded(plan, mr);
  ASSERT_FALSE(result.failure.has_value());
  auto const calls = mr.calls();
  ASSERT_GE(calls.size(), 7U);
  EXPECT_EQ(calls[0].stream, cudaStream_t{});  // 0x0: the default stream
  auto const* first_created  = calls[1].stream;
  auto const* second_created = calls[2].stream;
  for (auto const* created : {first_created, second_created}) {
    EXPECT_NE(created, cudaStream_t{});
    EXPECT_NE(created, cudaStreamLegacy);
    EXPECT_NE(created, cudaStreamPerThread);
  }
  EXPECT_NE(first_created, second_created);
  EXPECT_EQ(calls[3].stream, second_created);  // the free's logged stream
  EXPECT_EQ(calls[4].stream, cudaStreamLegacy);
  EXPECT_EQ(calls[5].stream, cudaStreamPerThread);
  EXPECT_EQ(calls[6].stream, first_created);
}

TEST_F(ThreadedReplay, LoggedFailuresAreReplayedAndCounted)
{
  auto const plan = plan_of(
    "1,00:00:01.000000,allocate failure,0x0,2000000,0x0\n"
    "1,00:00:01.000001,allocate failure,0x0,1000,0x0\n"
    "1,00:00:01.000002,allocate,0x100,100,0x0\n");
  recording_resource mr{1 << 20};
  auto const result = rmm::replay::replay_threaded(plan, mr);
  ASSERT_FALSE(result.failure.has_value());
  EXPECT_EQ(result.reproduced_failures, 1U);
  EXPECT_EQ(result.unexpected_successes, 1U);
  auto const calls = mr.calls();
  ASSERT_EQ(calls.size(), 4U);
  // The allocation that should have failed is given back at once.
  EXPECT_TRUE(calls[0].allocate);
  EXPECT_EQ(calls[0].bytes, 1000U);
  EXPECT_FALSE(calls[1].allocate);
  EXPECT_EQ(calls[1].ptr, calls[0].ptr);
}

TEST_F(ThreadedReplay, AnUnexpectedFailureStopsTheReplayAtItsLine)
{
  auto const plan = plan_of(
    "1,00:00:01.000000,allocate,0x100,100,0x0\n"
    "2,00:00:01.000001,allocate,0x200,2000000,0x0\n"
    "1,00:00:01.000002,allocate,0x300,300,0x0\n");
  recording_resource mr{1 << 20};
  auto const result = rmm::replay::replay_threaded(plan, mr);
  ASSERT_TRUE(result.failure.has_value());
  EXPECT_EQ(result.failure->line, 3U);
  EXPECT_EQ(
    result.failure->message,
    "allocation of 2000000 bytes failed, but succeeded in the log: recording_resource: request above the limit");
  EXPECT_EQ(result.events_replayed, 1U);  // line 4 never ran
  EXPECT_EQ(mr.live(), 0U);               // what was allocated before is freed
}

/// `threads` logged threads taking turns, `rounds` events each: every event hands the turn to
/// another thread.
rmm::replay::replay_plan round_robin_plan(int threads, int rounds)
{
  std::string rows;
  for (int round = 0; round < rounds; ++round) {
    for (int thread = 0; thread < threads; ++thread) {
      auto const pointer = 0x1000 * (thread + 1);
      rows +=
        fmt::format("{},00:00:01.000000,{},{:#x},256,0x0\n", thread, round % 2 == 0 ? "allocate" : "free", pointer);
    }
  }
  return plan_of(rows);
}

TEST_F(ThreadedReplay, OnlyTheThreadOfTheNextEventIsWoken)
{
  // Two thousand threads, each sleeping while the others take their turns: a hand-over that woke
  // every sleeping thread would wake millions of times.
  auto const plan = round_robin_plan(2000, 2);
  recording_resource mr;
  auto const result = rmm::replay::replay_threaded(plan, mr);
  ASSERT_FALSE(result.failure.has_value());
  EXPECT_EQ(result.events_replayed, 4000U);
  // A sleeping thread wakes only when it is handed the turn: at most once per event.
  EXPECT_LE(result.wakeups, plan.steps.size());
}

TEST_F(ThreadedReplay, ThousandsOfThreadsReplayInTimeLinearInTheEvents)
{
  // A scaling check, not a benchmark: 5,000 threads of one event each took half a minute when
  // every hand-over woke every waiting thread, and take well under a second when it wakes one.
  // The bound is generous enough for a loaded machine or a sanitizer build.
  auto const plan = round_robin_plan(5000, 1);
  recording_resource mr;
  auto const result = rmm::replay::replay_threaded(plan, mr);
  ASSERT_FALSE(result.failure.has_value());
  EXPECT_EQ(result.events_replayed, 5000U);
  EXPECT_LT(result.wall, std::chrono::seconds{5});
}

}  // namespace
