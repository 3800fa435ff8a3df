// SPDX-License-Identifier: Apache-2.0
#include <rmm/config/file_name_pattern.hpp>

#include <string>

namespace rmm::config {

std::optional<std::string> file_name_pattern_problem(std::string_view pattern)
{
  if (pattern.empty()) { return std::string{"an empty file name"}; }
  // A file name ends at its first NUL: the file opened would be named by what comes before it.
  if (auto const nul = pattern.find('\0'); nul != std::string_view::npos) {
    return "a NUL character at position " + std::to_string(nul) + ", where the file name would end";
  }
  // The pattern itself is quoted by the caller; these say what is wrong with it.
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') { continue; }
    if (i + 1 == pattern.size()) { return std::string{"a lone '%' at the end"}; }
    auto const placeholder = pattern[i + 1];
    if (placeholder != 'p' && placeholder != 'd' && placeholder != '%') {
      auto const printable = placeholder > ' ' && placeholder < 0x7f;
      return printable ? std::string{"the unknown placeholder '%"} + placeholder + "'"
                       : std::string{"an unknown placeholder after '%'"};
    }
    ++i;
  }
  return std::nullopt;
}

std::string expand_file_name_pattern(std::string_view pattern, long process_id, int device)
{
  std::string result;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      result += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'p': result += std::to_string(process_id); break;
      case 'd': result += std::to_string(device); break;
      default: result += pattern[i]; break;  // "%%" -> "%" (validation refuses other placeholders)
    }
  }
  return result;
}

}  // namespace rmm::config
