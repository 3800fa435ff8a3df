// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the CUDA programs the shim tests run have in common: an expectation that fails prints
// `FAIL: ...` and makes the exit status non-zero, a CUDA call that fails ends the program, and
// rmm-ctl (its path in RMM_TEST_CTL) is run with its exit status and output printed as
// `key=value` lines.

#include <cuda_runtime_api.h>

#include <sys/wait.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace rmm::test::client {

/// Expectations that failed so far.
inline int failures = 0;

inline void expect(bool ok, char const* what)
{
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++failures;
  }
}

inline void check(cudaError_t status, char const* call)
{
  if (status != cudaSuccess) {
    std::printf("FAIL: %s returned %s\n", call, cudaGetErrorName(status));
    std::fflush(stdout);
    std::exit(2);
  }
}

/// The current device's free memory.
inline std::size_t free_bytes()
{
  std::size_t free  = 0;
  std::size_t total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}

/// Runs `rmm-ctl ARGS` and prints `NAME_status=` and `NAME_output=` (its lines joined with '|').
inline int run_ctl(std::string const& name, std::string const& args)
{
  std::string const command = std::string{std::getenv("RMM_TEST_CTL")} + " " + args + " 2>&1";
  FILE* pipe                = popen(command.c_str(), "r");
  if (pipe == nullptr) { return -1; }
  std::string output;
  char chunk[512];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) { output += chunk; }
  int const status = pclose(pipe);
  int const code   = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  for (auto& c : output) {
    if (c == '\n') { c = '|'; }
  }
  std::printf("%s_status=%d\n%s_output=%s\n", name.c_str(), code, name.c_str(), output.c_str());
  return code;
}

}  // namespace rmm::test::client
