#include "byte_size.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace rmm::replay {

namespace {

std::string lowercase(std::string_view text)
{
  std::string lower{text};
  for (auto& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return lower;
}

std::optional<double> unit_factor(std::string_view unit)
{
  static constexpr std::array<std::pair<std::string_view, double>, 10> units{{
    {"b", 1.0},
    {"kib", 0x1p10},
    {"mib", 0x1p20},
    {"gib", 0x1p30},
    {"tib", 0x1p40},
    {"kb", 1e3},
    {"mb", 1e6},
    {"gb", 1e9},
    {"tb", 1e12},
    {"", 1.0},
  }};
  auto const lower = lowercase(unit);
  for (auto const& [name, factor] : units) {
    if (lower == name) { return factor; }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> parse_byte_size(std::string_view text)
{
  auto const number_end = text.find_first_not_of("0123456789.");
  auto const number     = text.substr(0, number_end);
  auto unit             = number_end == std::string_view::npos ? std::string_view{} : text.substr(number_end);
  if (unit.starts_with(' ')) { unit.remove_prefix(1); }
  if (number.empty()) { return std::nullopt; }

  auto const factor = unit_factor(unit);
  if (!factor) { return std::nullopt; }

  if (number.find('.') == std::string_view::npos && *factor == 1.0) {
    // Whole bytes: exact, whatever their size.
    std::size_t bytes{};
    auto const [end, ec] = std::from_chars(number.data(), number.data() + number.size(), bytes);
    if (ec != std::errc{} || end != number.data() + number.size()) { return std::nullopt; }
    return bytes;
  }
  double value{};
  auto const [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc{} || end != number.data() + number.size()) { return std::nullopt; }
  auto const bytes = std::round(value * *factor);
  if (!(bytes < 0x1p64)) { return std::nullopt; }
  return static_cast<std::size_t>(bytes);
}

}  // namespace rmm::replay
