// SPDX-License-Identifier: Apache-2.0
#include "allocation_log.hpp"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <limits>
#include <string_view>
#include <system_error>

namespace rmm::trace {

namespace {

namespace format = rmm::mr::allocation_log;

struct log_text {
  std::string text;
  std::string read_error;  ///< zlib's reason when the file ended early or was damaged ("" if read whole)
};

/// A field of the log as an error message shows it: whole up to 64 bytes, else its first 64 and its
/// length, so that a damaged log cannot flood the terminal; control characters escaped (a binary
/// file's bytes would garble it).
std::string shown(std::string_view field)
{
  constexpr std::size_t shown_bytes = 64;
  std::string text;
  for (char const c : field.substr(0, shown_bytes)) {
    auto const byte = static_cast<unsigned char>(c);
    text += byte < 0x20 || byte == 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
  }
  if (field.size() > shown_bytes) { text += fmt::format("... ({} bytes)", field.size()); }
  return text;
}

/// The error for a line beyond max_line_bytes at `where` ("FILE:LINE").
parse_error line_too_long(std::string const& where)
{
  return parse_error{fmt::format(
    "{}: line longer than {} bytes: not an allocation log (a row is at most about 120 bytes)", where, max_line_bytes)};
}

log_text read_compressed_or_plain(std::string const& path)
{
  errno       = 0;
  gzFile file = gzopen(path.c_str(), "rb");  // reads plain files too
  if (file == nullptr) {
    // errno is the system's reason; zlib leaves it 0 when only its own state could not be allocated.
    auto const reason = errno != 0 ? std::error_code{errno, std::generic_category()}.message()
                                   : std::string{"no memory for zlib's state"};
    throw parse_error{fmt::format("{}: cannot open the log: {}", path, reason)};
  }
  log_text log;
  std::array<char, 1 << 16> buffer{};
  std::size_t lines_ended = 0;
  std::size_t line_start  = 0;  // of the line being read, in log.text
  int n                   = 0;
  while ((n = gzread(file, buffer.data(), static_cast<unsigned>(buffer.size()))) > 0) {
    auto const read_before = log.text.size();
    log.text.append(buffer.data(), static_cast<std::size_t>(n));
    for (auto end = log.text.find('\n', read_before); end != std::string::npos; end = log.text.find('\n', end + 1)) {
      ++lines_ended;
      line_start = end + 1;
    }
    // A line without an end in sight is no log (an endless stream would take all memory).
    if (log.text.size() - line_start > max_line_bytes + 1) {  // + 1: a '\r' before its '\n'
      gzclose(file);
      throw line_too_long(fmt::format("{}:{}", path, lines_ended + 1));
    }
  }
  int error_code = 0;
  // zlib owns the message and frees it with the file: copy it first.
  std::string const what = gzerror(file, &error_code);
  gzclose(file);
  if (n < 0 || error_code < 0) { log.read_error = what.empty() ? "read error" : what; }
  return log;
}

template <class T>
T parse_number(std::string_view field, int base, std::string_view column, std::string const& where)
{
  auto digits = field;
  if (base == 16 && digits.starts_with("0x")) { digits.remove_prefix(2); }
  T value{};
  auto const [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (ec == std::errc::result_out_of_range && end == digits.data() + digits.size()) {
    throw parse_error{fmt::format("{}: column {} is '{}', out of range: expected a number below 2^{}", where, column,
                                  shown(field), std::numeric_limits<T>::digits)};
  }
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) {
    throw parse_error{fmt::format("{}: column {} is '{}', expected a {} number", where, column, shown(field),
                                  base == 16 ? "hexadecimal" : "decimal")};
  }
  return value;
}

/// Seconds since midnight of "HH:MM:SS.ffffff" (any number of fraction digits, or none); throws
/// parse_error for another format or a time no day has.
double parse_time(std::string_view field, std::string const& where)
{
  auto const is_digit   = [](char c) { return c >= '0' && c <= '9'; };
  auto const digits_at  = [&](std::size_t at) { return is_digit(field[at]) && is_digit(field[at + 1]); };
  auto const two_digits = [&](std::size_t at) { return (field[at] - '0') * 10 + (field[at + 1] - '0'); };
  auto const fraction   = field.size() > 8 ? field.substr(8) : std::string_view{};
  bool const formatted =
    field.size() >= 8 && digits_at(0) && field[2] == ':' && digits_at(3) && field[5] == ':' && digits_at(6) &&
    (fraction.empty() ||
     (fraction.size() >= 2 && fraction[0] == '.' && std::all_of(fraction.begin() + 1, fraction.end(), is_digit)));
  if (!formatted) {
    throw parse_error{fmt::format("{}: column Time is '{}', expected HH:MM:SS.ffffff", where, shown(field))};
  }
  auto const hours   = two_digits(0);
  auto const minutes = two_digits(3);
  auto const seconds = two_digits(6);
  if (hours > 23 || minutes > 59 || seconds > 60) {
    throw parse_error{fmt::format(
      "{}: column Time is '{}', a time no day has (hours up to 23, minutes up to 59, seconds up to 59, or 60 in a "
      "leap second)",
      where, shown(field))};
  }
  double seconds_and_fraction = 0;
  auto const text             = field.substr(6);
  (void)std::from_chars(text.data(), text.data() + text.size(), seconds_and_fraction);  // digits, checked above
  return hours * 3600.0 + minutes * 60.0 + seconds_and_fraction;
}

/// One row of the log; throws parse_error naming `where`.
event parse_row(std::string_view line, std::size_t line_number, std::string const& where)
{
  std::array<std::string_view, format::columns> fields{};
  std::size_t count = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ',') {
      if (count == fields.size()) {
        throw parse_error{fmt::format("{}: more than {} columns", where, format::columns)};
      }
      fields[count++] = line.substr(start, i - start);
      start           = i + 1;
    }
  }
  if (count != fields.size()) {
    throw parse_error{fmt::format("{}: {} column(s), expected {} ({})", where, count, format::columns, format::header)};
  }
  event e{};
  e.line          = line_number;
  e.thread        = parse_number<std::uint64_t>(fields[0], 10, "Thread", where);
  e.time_seconds  = parse_time(fields[1], where);
  auto const kind = format::parse_action(fields[2]);
  if (!kind) {
    throw parse_error{fmt::format("{}: unknown action '{}', expected {}, {} or {}", where, shown(fields[2]),
                                  format::action_name(action::allocate), format::action_name(action::allocate_failure),
                                  format::action_name(action::free))};
  }
  e.kind    = *kind;
  e.pointer = parse_number<std::uintptr_t>(fields[3], 16, "Pointer", where);
  e.size    = parse_number<std::size_t>(fields[4], 10, "Size", where);
  e.stream  = parse_number<std::uintptr_t>(fields[5], 16, "Stream", where);
  return e;
}

}  // namespace

log_contents parse_log(std::string const& text, std::string const& name, cut_off_row cut_off)
{
  log_contents log;
  std::size_t line_number = 0;
  std::size_t pos         = 0;
  bool header_seen        = false;
  while (pos < text.size()) {
    auto const eol = text.find('\n', pos);
    auto line      = std::string_view{text}.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    pos            = eol == std::string::npos ? text.size() : eol + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') { line.remove_suffix(1); }
    if (line.empty()) { continue; }
    auto const where = fmt::format("{}:{}", name, line_number);
    if (line.size() > max_line_bytes) { throw line_too_long(where); }
    if (!header_seen) {
      if (line != format::header) {
        throw parse_error{fmt::format("{}: expected the header '{}', found '{}'", where, format::header, shown(line))};
      }
      header_seen = true;
      continue;
    }
    try {
      log.events.push_back(parse_row(line, line_number, where));
    } catch (parse_error const& e) {
      // A last row without its line end is where a killed process stopped writing.
      bool const cut_off_last_row = eol == std::string::npos;
      if (!cut_off_last_row) { throw; }
      if (cut_off == cut_off_row::drop) {
        log.dropped_line = line_number;
        break;
      }
      throw parse_error{
        fmt::format("{} (the log ends in this row, as a log cut off by a crash does: "
                    "--complete-rows replays the {} complete rows before it)",
                    e.what(), log.events.size())};
    }
  }
  if (!header_seen) { throw parse_error{fmt::format("{}: empty log (no header)", name)}; }
  return log;
}

std::vector<event> parse_log(std::string const& text, std::string const& name)
{
  return parse_log(text, name, cut_off_row::refuse).events;
}

log_contents read_log(std::string const& path, cut_off_row cut_off)
{
  auto log = read_compressed_or_plain(path);
  if (!log.read_error.empty()) {
    if (cut_off == cut_off_row::refuse) {
      throw parse_error{
        fmt::format("{}: cannot read the log: {}{}", path, log.read_error,
                    log.text.empty() ? "" : " (--complete-rows replays the complete rows read before it)")};
    }
    // Keep the complete rows that decompressed; the row after them is the one lost.
    auto const last_end = log.text.rfind('\n');
    log.text.resize(last_end == std::string::npos ? 0 : last_end + 1);
    auto contents         = parse_log(log.text, path, cut_off);
    contents.dropped_line = static_cast<std::size_t>(std::count(log.text.begin(), log.text.end(), '\n')) + 1;
    return contents;
  }
  return parse_log(log.text, path, cut_off);
}

std::vector<event> read_log(std::string const& path) { return read_log(path, cut_off_row::refuse).events; }

}  // namespace rmm::trace
