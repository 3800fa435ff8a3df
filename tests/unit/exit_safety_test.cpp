// SPDX-License-Identifier: Apache-2.0
// Process exit is safe: no crash, no hang, nothing on stderr, whatever rmm objects are alive.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include <sys/wait.h>

namespace {

struct outcome {
  int status;
  std::string output;  // stdout and stderr together
};

outcome run_child(std::string const& scenario)
{
  std::string const command = std::string{RMM_EXIT_SAFETY_PROGRAM} + " " + scenario + " 2>&1";
  FILE* pipe                = popen(command.c_str(), "r");
  if (pipe == nullptr) { return {-1, "popen failed"}; }
  std::string output;
  std::array<char, 256> chunk{};
  while (fgets(chunk.data(), chunk.size(), pipe) != nullptr) { output += chunk.data(); }
  int const status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

class ExitSafety : public ::testing::TestWithParam<char const*> {};

TEST_P(ExitSafety, ExitsCleanlyAndQuietly)
{
  auto const result = run_child(GetParam());
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_EQ(result.output, "");
}

INSTANTIATE_TEST_SUITE_P(Scenarios,
                         ExitSafety,
                         ::testing::Values("static-objects", "current-resource", "exit-from-main"),
                         [](auto const& param_info) {
                           std::string name = param_info.param;
                           for (auto& c : name) {
                             if (c == '-') { c = '_'; }
                           }
                           return name;
                         });

}  // namespace
