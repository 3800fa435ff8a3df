// SPDX-License-Identifier: Apache-2.0
// main() of every test binary: refuses to run on a backend other than the one CTest asked for
// (RMM_EXPECTED_BACKEND), so an emulator run can never silently use a GPU or the reverse.

#include "backend.hpp"

#include <rmm/error.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

int main(int argc, char** argv)
{
  testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) { return RUN_ALL_TESTS(); }  // test discovery at build time

  char const* expected = std::getenv("RMM_EXPECTED_BACKEND");
  try {
    auto const actual = rmm::test::to_string(rmm::test::current_backend());
    if (expected != nullptr && std::string_view{expected} != actual) {
      std::fprintf(stderr, "test backend mismatch: expected %s, running on %s\n", expected, actual);
      return 1;
    }
    std::printf("[rmm] backend: %s, %d device(s)\n", actual, rmm::test::device_count());
  } catch (rmm::cuda_error const& e) {
    std::fprintf(stderr, "no usable CUDA (expected backend %s): %s\n", expected ? expected : "unset", e.what());
    return 1;
  }
  return RUN_ALL_TESTS();
}
