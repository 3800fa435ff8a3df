// SPDX-License-Identifier: Apache-2.0
// The shim under a CUDA program with kernels, built three ways (static runtime, shared runtime,
// per-thread default stream): every allocation is seen and counted however the program reaches
// the driver, and a block still written by a kernel is never handed to a new owner. CUDA graphs
// relaunch with the same results after their memory was paused.

#include "shim_runner.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using rmm::test::run_program;
using rmm::test::write_config;

/// A pool with room for exactly one 32 MiB block (and the counter's small one): the next
/// cudaMalloc of 32 MiB can only return the block just freed.
std::string one_block_pool()
{
  return write_config("shim_gpu_one_block.toml",
                      "[[resource]]\ntype = \"pool\"\ninitial_size = \"34MiB\"\nmaximum_size = \"34MiB\"\n\n"
                      "[[resource]]\ntype = \"cuda\"\n");
}

class ShimOnGpu : public ::testing::TestWithParam<char const*> {
 protected:
  [[nodiscard]] static std::string program()
  {
    return std::string{RMM_SHIM_KERNEL_CLIENT_DIR} + "/shim_kernel_client_" + GetParam();
  }
};

TEST_P(ShimOnGpu, EveryAllocationIsServedAndCounted)
{
  auto const r = run_program(program(), "count");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("mismatches"), "0");
  auto const expected = std::stoll(r.value("allocations")) + std::stoll(r.value("async_allocations"));
  EXPECT_EQ(r.reported("allocations"), expected) << r.report;
  EXPECT_EQ(r.reported("frees"), expected) << r.report;
  EXPECT_EQ(r.reported("foreign_pointer"), 0) << r.report;
}

TEST_P(ShimOnGpu, AKernelStillWritingAFreedBlockNeverReachesItsNewOwner)
{
  auto const config = one_block_pool();
  auto const r      = run_program(program(), "premature-reuse", {{"RMM_CONFIG", config}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("same_block"), "1") << "the test needs the block to be reused";
  EXPECT_EQ(r.value("second_owner_mismatches"), "0");
}

TEST_P(ShimOnGpu, WithoutDeviceWideFreesTheKernelWouldOverwriteTheNewOwner)
{
  // The check above can fail: with frees ordered on the legacy stream only, the non-blocking
  // stream's kernel is not waited for.
  auto const config = one_block_pool();
  auto const r =
    run_program(program(), "premature-reuse", {{"RMM_CONFIG", config}, {"RMM_SHIM_FREE_POLICY", "stream_ordered"}});
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(r.value("same_block"), "1");
  EXPECT_NE(r.value("second_owner_mismatches"), "") << r.output;
  EXPECT_NE(r.value("second_owner_mismatches"), "0") << r.output;
}

TEST_P(ShimOnGpu, ABlockReusedInTheLegacyOrderIsSafeOnANonBlockingStreamCreatedLater)
{
  auto const config = one_block_pool();
  auto const r      = run_program(program(), "new-stream-reuse", {{"RMM_CONFIG", config}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("same_block"), "1") << "the test needs the block to be reused";
  EXPECT_EQ(r.value("second_owner_mismatches"), "0");
}

INSTANTIATE_TEST_SUITE_P(Builds, ShimOnGpu, ::testing::Values("static", "shared", "ptds"));

TEST(ShimUnderPyTorch, TrainingStepsGiveTheSameLossesWithAndWithoutTheShim)
{
  std::string const script = std::string{"python3 "} + RMM_SHIM_TORCH_SMOKE;
  auto const plain         = run_program(script, "8", {}, false);
  auto const shimmed       = run_program(script, "8");
  ASSERT_EQ(plain.status, 0) << plain.output;
  ASSERT_EQ(shimmed.status, 0) << shimmed.output;
  for (int step = 0; step < 8; ++step) {
    auto const key = "loss" + std::to_string(step);
    ASSERT_NE(plain.value(key), "") << plain.output;
    EXPECT_EQ(shimmed.value(key), plain.value(key)) << key;
  }
  EXPECT_GT(shimmed.reported("allocations"), 100) << shimmed.report;
  EXPECT_EQ(shimmed.reported("failures"), 0) << shimmed.report;
}

TEST(ShimUnderPyTorch, ACudaTensorSharedWithAChildProcessIsChangedThere)
{
  // torch.multiprocessing with the caching allocator on: it exports the segment it got from
  // cudaMalloc, a block of the shim's pool.
  std::string const script = std::string{"python3 "} + RMM_SHIM_TORCH_IPC;
  auto const plain         = run_program(script, "", {}, false);
  auto const shimmed       = run_program(script, "");
  ASSERT_EQ(plain.value("ipc"), "ok") << plain.output;
  EXPECT_EQ(shimmed.value("ipc"), "ok") << shimmed.output;
  EXPECT_EQ(shimmed.status, 0) << shimmed.output;
}

TEST(ShimGraphs, AGraphsIdleMemoryGoesBackAtAPauseAndItRelaunchesWithTheSameResults)
{
  auto const r = run_program(RMM_SHIM_GRAPH_CLIENT, "");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("first_launch_wrong"), "0");
  EXPECT_GE(std::stoull(r.value("graph_reserved_before")), std::size_t{256} << 20) << r.output;
  // The tag's pause: the graph's scratch memory, mapped by the driver, is given back too.
  EXPECT_EQ(r.value("graph_reserved_paused"), "0") << r.output;
  EXPECT_NE(r.value("pause_tag_message").find("of CUDA graphs' idle memory given back"), std::string::npos) << r.output;
  EXPECT_EQ(r.value("kept_wrong"), "0") << "the contents of the tag's block survive its pause";
  EXPECT_EQ(r.value("relaunch_wrong"), "0");
  EXPECT_GE(std::stoull(r.value("graph_reserved_relaunched")), std::size_t{256} << 20) << r.output;
  EXPECT_EQ(r.value("discard_relaunch_wrong"), "0");
  // A graph's allocation not freed yet is not the pause's to give back, and the pause says so.
  EXPECT_GE(std::stoull(r.value("graph_used_paused")), std::size_t{256} << 20) << r.output;
  EXPECT_NE(r.value("pause_process_message").find("stays in allocations CUDA graphs made"), std::string::npos)
    << r.output;
  EXPECT_EQ(r.value("process_relaunch_wrong"), "0");
  EXPECT_EQ(r.reported("failures"), 0) << r.report;
}

TEST(ShimUnderPyTorch, ACapturedTrainingStepReplaysTheSameAfterItsTagIsPaused)
{
  // torch.cuda.CUDAGraph with the caching allocator on: the graph pool's segments are blocks of
  // the tag's stack, paused with their contents and mapped again at the same addresses.
  std::string const script = std::string{"python3 "} + RMM_SHIM_TORCH_GRAPH;
  auto const straight      = run_program(script, "");
  auto const paused        = run_program(script, "pause");
  ASSERT_EQ(straight.status, 0) << straight.output;
  ASSERT_EQ(paused.status, 0) << paused.output;
  EXPECT_EQ(paused.value("pause"), "0") << paused.output;
  EXPECT_GE(std::stoll(paused.value("freed_by_pause")), 256LL << 20) << paused.output;
  for (int replay = 0; replay < 6; ++replay) {
    auto const key = "loss" + std::to_string(replay);
    ASSERT_NE(straight.value(key), "") << straight.output;
    EXPECT_EQ(paused.value(key), straight.value(key)) << key;
  }
}

}  // namespace
