// SPDX-License-Identifier: Apache-2.0
#pragma once

// A file or directory of one test process under the test's temporary directory, removed with the
// object: tests that hand a path to a child program leave nothing behind in /tmp.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace rmm::test {

class scratch_path {
 public:
  /// `<TempDir><stem>_<pid><suffix>`: the process id keeps concurrent test processes apart.
  explicit scratch_path(std::string const& stem, std::string const& suffix = "")
    : path_{::testing::TempDir() + stem + "_" + std::to_string(::getpid()) + suffix}
  {
  }
  scratch_path(scratch_path const&)            = delete;
  scratch_path& operator=(scratch_path const&) = delete;
  ~scratch_path()
  {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  [[nodiscard]] std::string const& str() const noexcept { return path_; }

 private:
  std::string path_;
};

}  // namespace rmm::test
