// SPDX-License-Identifier: Apache-2.0
// The conformance programs (this folder), each run as it is and under the shim: every `check`
// line must be the same in both runs. IPC, which the emulator does not model, runs on a GPU only;
// the others run on both backends (what the emulator lacks, such as pitched memory, the same way
// in both runs), and on a GPU in both builds of the runtime.

#include "shim_runner.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct program {
  char const* name;
  char const* runtime;  // "shared" or "static"
};

void PrintTo(program const& p, std::ostream* out) { *out << p.name << " (" << p.runtime << " runtime)"; }

/// The `check` lines, in order.
std::vector<std::string> checks(std::string const& output)
{
  std::vector<std::string> lines;
  std::istringstream in{output};
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("check ", 0) == 0) { lines.push_back(line); }
  }
  return lines;
}

class Conformance : public ::testing::TestWithParam<program> {};

TEST_P(Conformance, SameAnswersWithAndWithoutTheShim)
{
  auto const [name, runtime] = GetParam();
  std::string const path =
    std::string{RMM_CONFORMANCE_DIR} + "/conformance_" + name + (std::string{runtime} == "static" ? "_static" : "");
  auto const native  = rmm::test::run_program(path, "", {}, false);
  auto const shimmed = rmm::test::run_program(path, "", {});
  ASSERT_EQ(native.status, 0) << native.output;
  ASSERT_EQ(shimmed.status, 0) << shimmed.output;
  auto const expected = checks(native.output);
  ASSERT_FALSE(expected.empty()) << native.output;
  EXPECT_EQ(checks(shimmed.output), expected) << "native:\n"
                                              << native.output << "\nunder the shim:\n"
                                              << shimmed.output;
  EXPECT_GT(shimmed.reported("allocations"), 0) << "the shim served nothing: " << shimmed.report;
}

std::vector<program> programs()
{
  std::vector<program> all{{"alignment", "shared"}, {"capture", "shared"}, {"errors", "shared"},
                           {"reset", "shared"},     {"queries", "shared"}, {"near_capacity", "shared"}};
  if (RMM_CONFORMANCE_ON_GPU) {
    all.push_back({"ipc", "shared"});
    for (char const* name : {"alignment", "capture", "errors", "reset", "queries", "ipc", "near_capacity"}) {
      all.push_back({name, "static"});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Programs, Conformance, ::testing::ValuesIn(programs()), [](auto const& test) {
  return std::string{test.param.name} + "_" + test.param.runtime;
});

}  // namespace
