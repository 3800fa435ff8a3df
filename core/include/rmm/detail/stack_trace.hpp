// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace rmm::detail {

/// The call stack at construction, kept as raw return addresses (cheap) and symbolized only
/// when printed. Symbols come from the dynamic symbol table: link programs with -rdynamic for
/// names of functions in the executable itself.
class stack_trace {
 public:
  stack_trace();

  [[nodiscard]] std::size_t depth() const noexcept { return frames_.size(); }
  /// One line per frame, "#N module(function+offset) [address]", names demangled.
  [[nodiscard]] std::string to_string() const;

 private:
  std::vector<void*> frames_;
};

}  // namespace rmm::detail
