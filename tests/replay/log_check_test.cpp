// SPDX-License-Identifier: Apache-2.0
// rmm::trace::check_log: the semantic checks rmm-replay runs before replaying, each error naming
// the line.

#include <allocation_log.hpp>
#include <log_check.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using rmm::trace::action;

std::string const header = "Thread,Time,Action,Pointer,Size,Stream\n";

rmm::trace::log_facts check(std::string const& rows)
{
  return rmm::trace::check_log(rmm::trace::parse_log(header + rows, "log.csv"), "log.csv");
}

std::string check_error(std::string const& rows)
{
  try {
    (void)check(rows);
  } catch (rmm::trace::parse_error const& e) {
    return e.what();
  }
  return "accepted";
}

TEST(LogCheck, PairsEveryFreeWithItsAllocation)
{
  auto const facts = check(
    "1,00:00:01.000000,allocate,0x100,256,0x0\n"
    "2,00:00:01.000001,allocate,0x200,1000,0x0\n"
    "1,00:00:01.000002,free,0x100,256,0x0\n"
    "1,00:00:01.000003,allocate failure,0x0,9999,0x0\n"
    "2,00:00:01.000004,allocate,0x100,64,0x0\n");
  ASSERT_EQ(facts.allocation_of.size(), 5U);
  EXPECT_EQ(facts.allocation_of[2], 0U);
  EXPECT_EQ(facts.allocation_of[0], rmm::trace::no_allocation);
  EXPECT_EQ(facts.allocation_of[3], rmm::trace::no_allocation);
  EXPECT_EQ(facts.allocations, 3U);
  EXPECT_EQ(facts.frees, 1U);
  EXPECT_EQ(facts.logged_failures, 1U);
  EXPECT_EQ(facts.left_live, 2U);
  EXPECT_EQ(facts.peak_live_bytes, 1256U);
}

TEST(LogCheck, FreeOfAPointerNeverAllocated)
{
  EXPECT_EQ(check_error("1,00:00:01.000000,allocate,0x100,256,0x0\n"
                        "1,00:00:01.000001,free,0x200,256,0x0\n"),
            "log.csv:3: free of 0x200, which was never allocated in this log (was the log cut at its start?)");
}

TEST(LogCheck, DoubleFree)
{
  EXPECT_EQ(check_error("1,00:00:01.000000,allocate,0x100,256,0x0\n"
                        "1,00:00:01.000001,free,0x100,256,0x0\n"
                        "2,00:00:01.000002,free,0x100,256,0x0\n"),
            "log.csv:4: double free of 0x100 (allocated at line 2, already freed at line 3)");
}

TEST(LogCheck, FreeWithAnotherSize)
{
  EXPECT_EQ(check_error("1,00:00:01.000000,allocate,0x100,256,0x0\n"
                        "1,00:00:01.000001,free,0x100,128,0x0\n"),
            "log.csv:3: free of 0x100 with size 128, but it was allocated with size 256 at line 2");
}

TEST(LogCheck, PointerAllocatedTwiceWhileLive)
{
  EXPECT_EQ(check_error("1,00:00:01.000000,allocate,0x100,256,0x0\n"
                        "1,00:00:01.000001,allocate,0x100,256,0x0\n"),
            "log.csv:3: allocate of 0x100, which is still allocated (allocated at line 2 and not freed since)");
}

TEST(LogCheck, SuccessfulAllocationOfBytesWithANullPointer)
{
  EXPECT_EQ(check_error("1,00:00:01.000000,allocate,0x0,256,0x0\n"),
            "log.csv:2: allocate of 256 bytes logged with a null pointer (a failed allocation is logged as 'allocate "
            "failure')");
}

TEST(LogCheck, ZeroByteAllocationsMayShareTheNullPointer)
{
  auto const facts = check(
    "1,00:00:01.000000,allocate,0x0,0,0x0\n"
    "1,00:00:01.000001,allocate,0x0,0,0x0\n"
    "1,00:00:01.000002,free,0x0,0,0x0\n"
    "1,00:00:01.000003,free,0x0,0,0x0\n");
  EXPECT_EQ(facts.frees, 2U);
  EXPECT_EQ(facts.left_live, 0U);
  EXPECT_EQ(check_error("1,00:00:01.000000,allocate,0x0,0,0x0\n"
                        "1,00:00:01.000001,free,0x0,0,0x0\n"
                        "1,00:00:01.000002,free,0x0,0,0x0\n"),
            "log.csv:4: double free of 0x0 (allocated at line 2, already freed at line 3)");
}

TEST(LogCheck, AddressReusedAfterItsFree)
{
  auto const facts = check(
    "1,00:00:01.000000,allocate,0x100,256,0x0\n"
    "1,00:00:01.000001,free,0x100,256,0x0\n"
    "2,00:00:01.000002,allocate,0x100,512,0x0\n"
    "2,00:00:01.000003,free,0x100,512,0x0\n");
  EXPECT_EQ(facts.allocation_of[3], 2U);
  EXPECT_EQ(facts.peak_live_bytes, 512U);
}

}  // namespace
