// SPDX-License-Identifier: Apache-2.0
#pragma once

// Runs a program with librmm_shim.so preloaded and collects what it printed and the shim's JSON
// report (RMM_SHIM_REPORT_FILE).

#include <scratch_path.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmm::test {

struct outcome {
  int status{};
  std::string output;  // stdout and stderr together
  std::string report;  // the shim's JSON report, if written

  /// The value printed as `key=value`, or "".
  [[nodiscard]] std::string value(std::string const& key) const
  {
    std::smatch match;
    std::regex const pattern{"(^|\n)" + key + "=([^\n]*)"};
    return std::regex_search(output, match, pattern) ? match[2].str() : std::string{};
  }
  /// A number from the report: the first `"key":N`.
  [[nodiscard]] long long reported(std::string const& key) const
  {
    std::smatch match;
    std::regex const pattern{"\"" + key + "\":([0-9]+)"};
    return std::regex_search(report, match, pattern) ? std::stoll(match[1].str()) : -1;
  }
};

inline std::string quoted(std::string const& s) { return "'" + s + "'"; }

/// A preload list: in a sanitizer build, the sanitizer's runtime comes first (it must initialize
/// before the instrumented shim runs).
inline std::string sanitized(std::string const& preload)
{
#ifdef RMM_SANITIZER_RUNTIME
  std::string const runtime{RMM_SANITIZER_RUNTIME};
  if (!runtime.empty()) { return preload.empty() ? runtime : runtime + ":" + preload; }
#endif
  return preload;
}

/// A control directory of this test program's own (XDG_RUNTIME_DIR for the programs it runs), so
/// that tests running at once and the user's own processes do not meet; removed at exit, with the
/// sockets of programs that exited without cleaning up.
inline std::string runtime_directory()
{
  static scratch_path const dir{"shim_test_xdg"};
  (void)::mkdir(dir.str().c_str(), 0700);
  return dir.str();
}

/// Runs `program scenario` with the shim preloaded and `environment` set.
inline outcome run_program(std::string const& program,
                           std::string const& scenario,
                           std::map<std::string, std::string> environment = {},
                           bool preload                                   = true)
{
  static int serial = 0;
  std::string const report_path =
    ::testing::TempDir() + "shim_report_" + std::to_string(::getpid()) + "_" + std::to_string(serial++) + ".json";
  std::remove(report_path.c_str());
  if (preload) { environment.emplace("LD_PRELOAD", sanitized(RMM_SHIM_LIBRARY)); }
  environment.emplace("RMM_SHIM_REPORT_FILE", report_path);
  std::string command = "env";
  for (auto const& [name, value] : environment) { command += " " + name + "=" + quoted(value); }
  command += " " + program + " " + scenario + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) { return {-1, "popen failed", ""}; }
  outcome result;
  std::array<char, 512> chunk{};
  while (fgets(chunk.data(), chunk.size(), pipe) != nullptr) { result.output += chunk.data(); }
  int const status = pclose(pipe);
  result.status    = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream file{report_path};
  std::stringstream text;
  text << file.rdbuf();
  result.report = text.str();
  std::remove(report_path.c_str());
  return result;
}

/// Writes `toml` to a file in the test's temporary directory; returns its path.
inline std::string write_config(std::string const& name, std::string const& toml)
{
  std::string const path = ::testing::TempDir() + name;
  std::ofstream file{path};
  file << toml;
  return path;
}

}  // namespace rmm::test
