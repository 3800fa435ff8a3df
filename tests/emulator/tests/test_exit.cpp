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

TEST(EmulatorExit, PendingStreamWorkDoesNotHoldUpExit)
{
  auto const r = emu::run_child({emu::child_path(), "exit-busy"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "main returns\n");
  EXPECT_EQ(r.err, "");
  EXPECT_LT(r.seconds, 10.0);  // the queued host function sleeps 20 s
}

}  // namespace
