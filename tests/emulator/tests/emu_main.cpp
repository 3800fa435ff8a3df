// SPDX-License-Identifier: Apache-2.0
// main() of the emulator tests: refuses to run anywhere but on the emulator.
#include "emu_test.hpp"

#include <cstdio>

int main(int argc, char** argv)
{
  ::testing::InitGoogleTest(&argc, argv);
  // Test discovery (--gtest_list_tests) runs without the emulator's LD_LIBRARY_PATH.
  if (!GTEST_FLAG_GET(list_tests)) {
    int count = 0;
    cudaGetDeviceCount(&count);
    if (rmm_emu_symbol("rmm_emu_version") == nullptr) {
      std::fprintf(stderr,
                   "these tests exercise the rmm CUDA emulator, which is not loaded: run them with "
                   "LD_LIBRARY_PATH=<build>/emulator/lib (ctest does)\n");
      return 1;
    }
  }
  return RUN_ALL_TESTS();
}
