// SPDX-License-Identifier: Apache-2.0
// Process exit: calls after the runtime's exit handler, and pending stream work at exit.
#include "emu_test.hpp"

namespace {

TEST(EmulatorExit, CallsFromStaticDestructorsGetCudartUnloading)
{
  auto const r = emu::run_child({emu::child_path(), "exit"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "main returns\n"
            "exit cudaFree cudaErrorCudartUnloading\n"
            "exit cudaStreamDestroy cudaErrorCudartUnloading\n"
            "exit cudaGetDevice cudaErrorCudartUnloading\n"
            "exit cudaMalloc cudaErrorCudartUnloading\n");
  EXPECT_EQ(r.err, "");
}

TEST(EmulatorExit, TheDriverAnswersStaticDestructors)
{
  // The main thread's thread_local objects are gone by then; its current context is not.
  auto const r = emu::run_child({emu::child_path(), "exit-driver"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "main returns\n"
            "exit cuCtxGetCurrent 0 context\n"
            "exit cuCtxSetCurrent 0\n"
            "exit cuCtxGetDevice 0 device 1\n"
            "exit cuMemFree 0\n");
  EXPECT_EQ(r.err, "");
}

TEST(EmulatorExit, PendingStreamWorkDoesNotHoldUpExit)
{
  auto const r = emu::run_child({emu::child_path(), "exit-busy"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "main returns\n");
  EXPECT_EQ(r.err, "");
  EXPECT_LT(r.seconds, 10.0);  // the queued host function sleeps 20 s
}

}  // namespace
