// SPDX-License-Identifier: Apache-2.0
#include <rmm/config/size.hpp>

#include <rmm/parse_bytes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

namespace rmm::config {

namespace {

std::string_view trim(std::string_view text)
{
  auto const is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) { text.remove_prefix(1); }
  while (!text.empty() && is_space(text.back())) { text.remove_suffix(1); }
  return text;
}

std::string generic_expectation(bool allow_percent)
{
  return rmm::byte_size_expectation() + (allow_percent ? ", or a percentage of free device memory like \"50%\"" : "");
}

/// Digits, then optionally a point and more digits: no sign, exponent, "inf" or "nan".
bool is_plain_decimal(std::string_view text)
{
  auto const digit    = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  auto const point    = text.find('.');
  auto const whole    = text.substr(0, point);
  auto const fraction = point == std::string_view::npos ? std::string_view{} : text.substr(point + 1);
  return !whole.empty() && std::all_of(whole.begin(), whole.end(), digit) &&
         (point == std::string_view::npos ||
          (!fraction.empty() && std::all_of(fraction.begin(), fraction.end(), digit)));
}

std::variant<size_spec, size_problem> parse_percent(std::string_view number, bool allow_percent)
{
  if (!allow_percent) {
    return size_problem{"a size in bytes, like \"512MiB\" (a percentage of device memory is not accepted here)"};
  }
  double percent{};
  auto const read = is_plain_decimal(number) ? std::from_chars(number.data(), number.data() + number.size(), percent)
                                             : std::from_chars_result{number.data(), std::errc::invalid_argument};
  if (read.ec != std::errc{} || read.ptr != number.data() + number.size()) {
    return size_problem{"a percentage of free device memory like \"50%\" or \"12.5%\""};
  }
  if (!(percent > 0.0) || percent > 100.0) {
    return size_problem{"a percentage of free device memory above 0% and at most 100%"};
  }
  return size_spec{.bytes = 0, .percent = percent, .is_percent = true};
}

}  // namespace

std::variant<size_spec, size_problem> parse_size(std::string_view text, bool allow_percent)
{
  text = trim(text);
  if (text.empty()) { return size_problem{generic_expectation(allow_percent)}; }
  if (text.back() == '%') {
    text.remove_suffix(1);
    return parse_percent(trim(text), allow_percent);
  }
  auto const bytes = rmm::parse_bytes(text);
  if (auto const* problem = std::get_if<rmm::bytes_problem>(&bytes)) {
    // The general expectation names every accepted form, percentages included where they are.
    if (problem->expected == rmm::byte_size_expectation()) { return size_problem{generic_expectation(allow_percent)}; }
    return size_problem{problem->expected};
  }
  return size_spec{.bytes = std::get<std::uint64_t>(bytes), .percent = 0, .is_percent = false};
}

std::uint64_t resolve_size(size_spec const& size, std::uint64_t free_bytes) noexcept
{
  if (!size.is_percent) { return size.bytes; }
  auto const exact = static_cast<long double>(free_bytes) * static_cast<long double>(size.percent) / 100.0L;
  auto const bytes = static_cast<std::uint64_t>(std::floor(exact));
  return bytes & ~std::uint64_t{255};
}

std::string to_toml_text(size_spec const& size)
{
  if (size.is_percent) { return fmt::format("\"{}%\"", size.percent); }
  constexpr std::array<std::pair<std::string_view, int>, 4> units{{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}}};
  for (auto const& [name, shift] : units) {
    auto const unit_bytes = std::uint64_t{1} << shift;
    if (size.bytes >= unit_bytes && size.bytes % unit_bytes == 0) {
      return fmt::format("\"{}{}\"", size.bytes / unit_bytes, name);
    }
  }
  return std::to_string(size.bytes);
}

}  // namespace rmm::config
