// SPDX-License-Identifier: Apache-2.0
// rmm::trace::replay_sequential, the one-thread replay the tests and benchmarks use: the same
// reading of a log as rmm-replay's.

#include "recording_resource.hpp"

#include <allocation_log.hpp>
#include <logged_stream.hpp>
#include <sequential_replay.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

namespace {

std::string const header = "Thread,Time,Action,Pointer,Size,Stream\n";
std::string const row    = "1,00:00:01.000000,";

TEST(SequentialReplay, RepeatedZeroByteAllocationsAtTheNullPointerReplay)
{
  auto const events =
    rmm::trace::parse_log(header + row + "allocate,0x0,0,0x0\n" + row + "allocate,0x0,0,0x0\n" + row +
                            "allocate,0x100,256,0x0\n" + row + "free,0x0,0,0x0\n" + row + "free,0x0,0,0x0\n",
                          "zero.csv");
  rmm::test::recording_resource recorder;
  auto const result = rmm::trace::replay_sequential(events, recorder);
  EXPECT_EQ(result.allocations, 3U);
  EXPECT_EQ(result.frees, 2U);
  EXPECT_EQ(result.peak_live_bytes, 256U);
  EXPECT_EQ(recorder.live(), 0U) << "the zero-byte blocks were freed, the 256-byte one at the end";
}

TEST(SequentialReplay, BuiltinStreamHandlesMeanTheBuiltinStreams)
{
  auto const events =
    rmm::trace::parse_log(header + row + "allocate,0x100,256,0x0\n" + row + "allocate,0x200,256,0x1\n" + row +
                            "allocate,0x300,256,0x2\n" + row + "allocate,0x400,256,0x7f00\n",
                          "streams.csv");
  rmm::test::recording_resource recorder;
  (void)rmm::trace::replay_sequential(events, recorder);
  auto const calls = recorder.calls();
  ASSERT_GE(calls.size(), 4U);
  EXPECT_EQ(calls[0].stream, cudaStream_t{});
  EXPECT_EQ(calls[1].stream, cudaStreamLegacy);
  EXPECT_EQ(calls[2].stream, cudaStreamPerThread);
  EXPECT_NE(calls[3].stream, cudaStream_t{});
  EXPECT_NE(calls[3].stream, cudaStreamLegacy);
  EXPECT_NE(calls[3].stream, cudaStreamPerThread);
  EXPECT_NE(calls[3].stream, reinterpret_cast<cudaStream_t>(0x7f00)) << "a created stream, not the logged handle";
}

TEST(LoggedStream, OnlyTheThreeFixedHandlesAreBuiltin)
{
  EXPECT_EQ(rmm::trace::builtin_stream(0)->value(), cudaStream_t{});
  EXPECT_EQ(rmm::trace::builtin_stream(1)->value(), cudaStreamLegacy);
  EXPECT_EQ(rmm::trace::builtin_stream(2)->value(), cudaStreamPerThread);
  EXPECT_FALSE(rmm::trace::builtin_stream(3).has_value());
  EXPECT_FALSE(rmm::trace::builtin_stream(0x7f00).has_value());
}

}  // namespace
