// SPDX-License-Identifier: Apache-2.0
#include <rmm/config/boolean.hpp>

#include <algorithm>
#include <array>
#include <cctype>

namespace rmm::config {

std::optional<bool> parse_boolean(std::string_view text) noexcept
{
  auto const is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) { text.remove_prefix(1); }
  while (!text.empty() && is_space(text.back())) { text.remove_suffix(1); }
  auto const is = [text](std::string_view word) {
    return text.size() == word.size() && std::equal(text.begin(), text.end(), word.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           });
  };
  constexpr std::array<std::string_view, 4> yes{"true", "yes", "on", "1"};
  constexpr std::array<std::string_view, 4> no{"false", "no", "off", "0"};
  if (std::any_of(yes.begin(), yes.end(), is)) { return true; }
  if (std::any_of(no.begin(), no.end(), is)) { return false; }
  return std::nullopt;
}

}  // namespace rmm::config
