// SPDX-License-Identifier: Apache-2.0
#include <rmm/parse_bytes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <string>

namespace rmm {

namespace {

struct unit {
  std::string_view name;     // lower case, as matched
  std::string_view display;  // as printed
  std::uint64_t bytes;
};

constexpr std::array<unit, 6> binary_units{{
  {"", "B", 1},
  {"b", "B", 1},
  {"kib", "KiB", std::uint64_t{1} << 10},
  {"mib", "MiB", std::uint64_t{1} << 20},
  {"gib", "GiB", std::uint64_t{1} << 30},
  {"tib", "TiB", std::uint64_t{1} << 40},
}};

// Units people write by habit whose meaning (1000 or 1024) is unclear: refused with a hint.
constexpr std::array<std::string_view, 8> ambiguous_units{"k", "kb", "m", "mb", "g", "gb", "t", "tb"};

// Enough for "1.5GiB" and "0.25TiB", few enough that fraction * 2^40 cannot overflow 64 bits.
constexpr std::size_t max_fraction_digits = 6;

std::string_view trim(std::string_view text)
{
  auto const is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) { text.remove_prefix(1); }
  while (!text.empty() && is_space(text.back())) { text.remove_suffix(1); }
  return text;
}

std::string lower(std::string_view text)
{
  std::string result{text};
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

/// Splits "12.5rest" into "12", "5", "rest"; false when there is no digit before the point.
bool split_number(std::string_view text, std::string_view& whole, std::string_view& fraction, std::string_view& rest)
{
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) { ++i; }
  whole = text.substr(0, i);
  if (whole.empty()) { return false; }
  fraction = {};
  if (i < text.size() && text[i] == '.') {
    auto const start = ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) { ++i; }
    fraction = text.substr(start, i - start);
    if (fraction.empty()) { return false; }
  }
  rest = text.substr(i);
  return true;
}

std::variant<std::uint64_t, bytes_problem> parse_trimmed(std::string_view text)
{
  if (text.empty()) { return bytes_problem{byte_size_expectation()}; }
  if (text.front() == '-') { return bytes_problem{"a size above 0 (sizes cannot be negative)"}; }
  std::string_view whole, fraction, rest;
  if (!split_number(text, whole, fraction, rest)) { return bytes_problem{byte_size_expectation()}; }
  auto const unit_name = lower(trim(rest));
  if (std::find(ambiguous_units.begin(), ambiguous_units.end(), unit_name) != ambiguous_units.end()) {
    // The binary unit of the same letter: "512MB" means "512MiB" far more often than 512 * 10^6.
    auto const binary = std::find_if(binary_units.begin(), binary_units.end(), [&](unit const& u) {
      return u.name.size() == 3 && u.name.front() == unit_name.front();
    });
    auto const number = std::string{text.substr(0, text.size() - rest.size())};
    return bytes_problem{
      fmt::format("a binary unit: B, KiB, MiB, GiB or TiB (\"{}\" is ambiguous between powers of "
                  "1000 and 1024; write \"{}{}\" for {} * 2^{} bytes)",
                  std::string{trim(rest)}, number, binary->display, number, std::countr_zero(binary->bytes))};
  }
  auto const found =
    std::find_if(binary_units.begin(), binary_units.end(), [&](unit const& u) { return u.name == unit_name; });
  if (found == binary_units.end()) { return bytes_problem{byte_size_expectation()}; }
  if (fraction.size() > max_fraction_digits) {
    return bytes_problem{"a size with at most 6 decimals, like \"1.5GiB\""};
  }

  std::uint64_t whole_value{};
  auto const parsed = std::from_chars(whole.data(), whole.data() + whole.size(), whole_value);
  std::uint64_t bytes{};
  if (parsed.ec != std::errc{} || __builtin_mul_overflow(whole_value, found->bytes, &bytes)) {
    return bytes_problem{"a size below 16 EiB (2^64 bytes)"};
  }
  if (!fraction.empty()) {
    std::uint64_t fraction_value{};
    std::from_chars(fraction.data(), fraction.data() + fraction.size(), fraction_value);
    std::uint64_t scale = 1;
    for (std::size_t i = 0; i < fraction.size(); ++i) { scale *= 10; }
    auto const fraction_bytes = fraction_value * found->bytes;  // < 10^6 * 2^40: no overflow
    if (fraction_bytes % scale != 0) {
      return bytes_problem{"a whole number of bytes (\"1.5KiB\" is 1536 bytes; \"" + std::string{text} +
                           "\" is not whole)"};
    }
    if (__builtin_add_overflow(bytes, fraction_bytes / scale, &bytes)) {
      return bytes_problem{"a size below 16 EiB (2^64 bytes)"};
    }
  }
  return bytes;
}

}  // namespace

std::string byte_size_expectation()
{
  return "a size: bytes as an integer, or a string like \"512MiB\" or \"8GiB\" (units B, KiB, MiB, GiB, TiB)";
}

std::variant<std::uint64_t, bytes_problem> parse_bytes(std::string_view text) { return parse_trimmed(trim(text)); }

}  // namespace rmm
