#include "allocation_log.hpp"

#include <fmt/format.h>

#include <zlib.h>

#include <array>
#include <charconv>
#include <string_view>

namespace rmm::trace {

namespace {

std::string read_compressed_or_plain(std::string const& path)
{
  gzFile file = gzopen(path.c_str(), "rb");  // reads plain files too
  if (file == nullptr) { throw parse_error{fmt::format("{}: cannot open the log", path)}; }
  std::string text;
  std::array<char, 1 << 16> buffer{};
  int n = 0;
  while ((n = gzread(file, buffer.data(), static_cast<unsigned>(buffer.size()))) > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  int error_code = 0;
  // zlib owns the message and frees it with the file: copy it first.
  std::string const what = gzerror(file, &error_code);
  gzclose(file);
  if (n < 0 || error_code < 0) { throw parse_error{fmt::format("{}: cannot read the log: {}", path, what)}; }
  return text;
}

template <class T>
T parse_number(std::string_view field, int base, std::string_view column, std::string const& where)
{
  auto digits = field;
  if (base == 16 && digits.starts_with("0x")) { digits.remove_prefix(2); }
  T value{};
  auto const [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) {
    throw parse_error{fmt::format("{}: column {} is '{}', expected a {} number", where, column, field,
                                  base == 16 ? "hexadecimal" : "decimal")};
  }
  return value;
}

double parse_time(std::string_view field, std::string const& where)
{
  // HH:MM:SS.ffffff
  auto const bad = [&] {
    return parse_error{fmt::format("{}: column Time is '{}', expected HH:MM:SS.ffffff", where, field)};
  };
  if (field.size() < 8 || field[2] != ':' || field[5] != ':') { throw bad(); }
  try {
    auto const h = parse_number<unsigned>(field.substr(0, 2), 10, "Time", where);
    auto const m = parse_number<unsigned>(field.substr(3, 2), 10, "Time", where);
    auto seconds = field.substr(6);
    double s     = 0;
    auto const [end, ec] = std::from_chars(seconds.data(), seconds.data() + seconds.size(), s);
    if (ec != std::errc{} || end != seconds.data() + seconds.size()) { throw bad(); }
    return h * 3600.0 + m * 60.0 + s;
  } catch (parse_error const&) {
    throw bad();
  }
}

}  // namespace

std::vector<event> parse_log(std::string const& text, std::string const& name)
{
  std::vector<event> events;
  std::size_t line_number = 0;
  std::size_t pos         = 0;
  bool header_seen        = false;
  while (pos < text.size()) {
    auto const eol  = text.find('\n', pos);
    auto line       = std::string_view{text}.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    pos             = eol == std::string::npos ? text.size() : eol + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') { line.remove_suffix(1); }
    if (line.empty()) { continue; }
    auto const where = fmt::format("{}:{}", name, line_number);
    if (!header_seen) {
      if (line != "Thread,Time,Action,Pointer,Size,Stream") {
        throw parse_error{fmt::format("{}: expected the header 'Thread,Time,Action,Pointer,Size,Stream', found '{}'",
                                      where, line)};
      }
      header_seen = true;
      continue;
    }
    std::array<std::string_view, 6> fields{};
    std::size_t count = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= line.size(); ++i) {
      if (i == line.size() || line[i] == ',') {
        if (count == fields.size()) {
          throw parse_error{fmt::format("{}: more than 6 columns", where)};
        }
        fields[count++] = line.substr(start, i - start);
        start           = i + 1;
      }
    }
    if (count != fields.size()) {
      throw parse_error{fmt::format("{}: {} column(s), expected 6 (Thread,Time,Action,Pointer,Size,Stream)", where, count)};
    }
    event e{};
    e.line         = line_number;
    e.thread       = parse_number<std::uint64_t>(fields[0], 10, "Thread", where);
    e.time_seconds = parse_time(fields[1], where);
    if (fields[2] == "allocate") {
      e.kind = action::allocate;
    } else if (fields[2] == "allocate failure") {
      e.kind = action::allocate_failure;
    } else if (fields[2] == "free") {
      e.kind = action::free;
    } else {
      throw parse_error{fmt::format("{}: unknown action '{}', expected allocate, allocate failure or free", where,
                                    fields[2])};
    }
    e.pointer = parse_number<std::uintptr_t>(fields[3], 16, "Pointer", where);
    e.size    = parse_number<std::size_t>(fields[4], 10, "Size", where);
    e.stream  = parse_number<std::uintptr_t>(fields[5], 16, "Stream", where);
    events.push_back(e);
  }
  if (!header_seen) { throw parse_error{fmt::format("{}: empty log (no header)", name)}; }
  return events;
}

std::vector<event> read_log(std::string const& path) { return parse_log(read_compressed_or_plain(path), path); }

}  // namespace rmm::trace
