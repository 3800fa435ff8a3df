// SPDX-License-Identifier: Apache-2.0
#include <rmm/config/error.hpp>

#include <algorithm>
#include <utility>

namespace rmm::config {

std::string source_location::to_string() const
{
  if (in_environment()) { return "environment variable " + variable; }
  if (in_source()) { return file + ":" + std::to_string(line) + ":" + std::to_string(column); }
  if (!file.empty()) { return file; }
  return "built-in default";
}

namespace {

/// Control characters escaped, so a message is one line whatever the input held (toml++ quotes
/// offending input in its descriptions, newlines included).
std::string one_line(std::string text)
{
  auto const is_control = [](char c) {
    auto const byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
  };
  if (std::none_of(text.begin(), text.end(), is_control)) { return text; }  // the usual case: no copy
  std::string result;
  result.reserve(text.size());
  for (auto const c : text) {
    auto const byte = static_cast<unsigned char>(c);
    if (byte == '\n') {
      result += "\\n";
    } else if (byte < 0x20 || byte == 0x7f) {
      static constexpr char hex[] = "0123456789abcdef";
      result += "\\x";
      result += hex[byte >> 4];
      result += hex[byte & 0xf];
    } else {
      result += c;
    }
  }
  return result;
}

}  // namespace

config_error::config_error(source_location location, std::string found, std::string expected)
  : std::runtime_error{one_line(location.to_string() + ": found " + found + ", expected " + expected)},
    location_{std::move(location)},
    found_{one_line(std::move(found))},
    expected_{one_line(std::move(expected))}
{
}

}  // namespace rmm::config
