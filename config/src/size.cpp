#include <rmm/config/size.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace rmm::config {

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
  std::transform(result.begin(), result.end(), result.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  return result;
}

std::string generic_expectation(bool allow_percent)
{
  return std::string{"a size: bytes as an integer, or a string like \"512MiB\" or \"8GiB\" (units B, KiB, MiB, GiB, "
                     "TiB)"} +
         (allow_percent ? ", or a percentage of free device memory like \"50%\"" : "");
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

std::variant<size_spec, size_problem> parse_percent(std::string_view number, bool allow_percent)
{
  if (!allow_percent) {
    return size_problem{"a size in bytes, like \"512MiB\" (a percentage of device memory is not accepted here)"};
  }
  std::string_view whole, fraction, rest;
  if (!split_number(number, whole, fraction, rest) || !rest.empty()) {
    return size_problem{"a percentage of free device memory like \"50%\" or \"12.5%\""};
  }
  double percent{};
  auto const [end, error] = std::from_chars(number.data(), number.data() + number.size(), percent);
  if (error != std::errc{} || end != number.data() + number.size()) {
    return size_problem{"a percentage of free device memory like \"50%\" or \"12.5%\""};
  }
  if (!(percent > 0.0) || percent > 100.0) {
    return size_problem{"a percentage of free device memory above 0% and at most 100%"};
  }
  return size_spec{.bytes = 0, .percent = percent, .is_percent = true};
}

std::variant<size_spec, size_problem> parse_bytes(std::string_view text, bool allow_percent)
{
  if (text.front() == '-') { return size_problem{"a size above 0 (sizes cannot be negative)"}; }
  std::string_view whole, fraction, rest;
  if (!split_number(text, whole, fraction, rest)) { return size_problem{generic_expectation(allow_percent)}; }
  auto const unit_name = lower(trim(rest));
  if (std::find(ambiguous_units.begin(), ambiguous_units.end(), unit_name) != ambiguous_units.end()) {
    // The binary unit of the same letter: "512MB" means "512MiB" far more often than 512 * 10^6.
    auto const binary = std::find_if(binary_units.begin(), binary_units.end(), [&](unit const& u) {
      return u.name.size() == 3 && u.name.front() == unit_name.front();
    });
    auto const number = std::string{text.substr(0, text.size() - rest.size())};
    return size_problem{fmt::format("a binary unit: B, KiB, MiB, GiB or TiB (\"{}\" is ambiguous between powers of "
                                    "1000 and 1024; write \"{}{}\" for {} * 2^{} bytes)",
                                    std::string{trim(rest)},
                                    number,
                                    binary->display,
                                    number,
                                    std::countr_zero(binary->bytes))};
  }
  auto const found = std::find_if(binary_units.begin(), binary_units.end(), [&](unit const& u) {
    return u.name == unit_name;
  });
  if (found == binary_units.end()) {
    return size_problem{generic_expectation(allow_percent)};
  }
  if (fraction.size() > max_fraction_digits) {
    return size_problem{"a size with at most 6 decimals, like \"1.5GiB\""};
  }

  std::uint64_t whole_value{};
  auto const parsed = std::from_chars(whole.data(), whole.data() + whole.size(), whole_value);
  std::uint64_t bytes{};
  if (parsed.ec != std::errc{} || __builtin_mul_overflow(whole_value, found->bytes, &bytes)) {
    return size_problem{"a size below 16 EiB (2^64 bytes)"};
  }
  if (!fraction.empty()) {
    std::uint64_t fraction_value{};
    std::from_chars(fraction.data(), fraction.data() + fraction.size(), fraction_value);
    std::uint64_t scale = 1;
    for (std::size_t i = 0; i < fraction.size(); ++i) { scale *= 10; }
    auto const fraction_bytes = fraction_value * found->bytes;  // < 10^6 * 2^40: no overflow
    if (fraction_bytes % scale != 0) {
      return size_problem{"a whole number of bytes (\"1.5KiB\" is 1536 bytes; \"" + std::string{text} +
                          "\" is not whole)"};
    }
    if (__builtin_add_overflow(bytes, fraction_bytes / scale, &bytes)) {
      return size_problem{"a size below 16 EiB (2^64 bytes)"};
    }
  }
  return size_spec{.bytes = bytes, .percent = 0, .is_percent = false};
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
  return parse_bytes(text, allow_percent);
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
  for (auto it = binary_units.rbegin(); it != binary_units.rend(); ++it) {
    if (it->bytes > 1 && size.bytes >= it->bytes && size.bytes % it->bytes == 0) {
      return fmt::format("\"{}{}\"", size.bytes / it->bytes, it->display);
    }
  }
  return std::to_string(size.bytes);
}

}  // namespace rmm::config
