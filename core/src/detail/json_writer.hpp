// SPDX-License-Identifier: Apache-2.0
#pragma once

// A small JSON writer for the reports of the shim and of rmm-replay: strings escaped, objects and
// arrays nested, numbers as given. Header-only, so that the shim (which compiles core's sources in)
// and the tools (which include core/src) share it without a library of their own.

#include <fmt/format.h>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rmm::detail {

/// Appends `text` as a JSON string: quoted, with quote, backslash and control characters escaped.
inline void append_json_string(std::string& out, std::string_view text)
{
  out += '"';
  for (char const c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

/// `text` as a JSON string.
[[nodiscard]] inline std::string json_string(std::string_view text)
{
  std::string quoted;
  append_json_string(quoted, text);
  return quoted;
}

/// Writes one JSON document into a string, front to back:
///
///     json_writer json;
///     json.begin_object().member("pid", 42).key("devices").begin_array();
///     json.begin_object().member("device", 0).end_object();
///     json.end_array().end_object();  // {"pid":42,"devices":[{"device":0}]}
///
/// `spacing::compact` separates with "," and ":", `spacing::spaced` with ", " and ": ". A container
/// begun with `layout::lines` puts each of its members on a line of its own, indented two spaces a
/// level; containers inside it stay on their member's line unless they say otherwise. The writer
/// does not check the document's shape: a key outside an object is the caller's mistake.
class json_writer {
 public:
  enum class spacing : bool { compact, spaced };
  enum class layout : bool { one_line, lines };

  explicit json_writer(spacing style = spacing::compact) : spaced_{style == spacing::spaced} {}

  json_writer& begin_object(layout how = layout::one_line) { return open('{', how); }
  json_writer& end_object() { return close('}'); }
  json_writer& begin_array(layout how = layout::one_line) { return open('[', how); }
  json_writer& end_array() { return close(']'); }

  /// The name of the next value, in an object.
  json_writer& key(std::string_view name)
  {
    before_value();
    append_json_string(out_, name);
    out_ += spaced_ ? ": " : ":";
    after_key_ = true;
    return *this;
  }

  json_writer& string(std::string_view text)
  {
    before_value();
    append_json_string(out_, text);
    return *this;
  }

  template <std::integral T>
  requires(!std::same_as<T, bool>) json_writer& number(T value)
  {
    before_value();
    out_ += fmt::format("{}", value);
    return *this;
  }

  /// `value` with `decimals` digits after the point; null when it is not finite (JSON has no NaN).
  json_writer& number(double value, int decimals)
  {
    if (!std::isfinite(value)) { return null(); }
    before_value();
    out_ += fmt::format("{:.{}f}", value, decimals);
    return *this;
  }

  json_writer& boolean(bool value)
  {
    before_value();
    out_ += value ? "true" : "false";
    return *this;
  }

  json_writer& null()
  {
    before_value();
    out_ += "null";
    return *this;
  }

  /// key(name) and the value.
  json_writer& member(std::string_view name, std::string_view text) { return key(name).string(text); }
  json_writer& member(std::string_view name, char const* text) { return key(name).string(text); }
  template <std::integral T>
  requires(!std::same_as<T, bool>) json_writer& member(std::string_view name, T value)
  {
    return key(name).number(value);
  }
  json_writer& member(std::string_view name, double value, int decimals) { return key(name).number(value, decimals); }
  /// The number, or null when unset.
  template <std::integral T>
  json_writer& member(std::string_view name, std::optional<T> const& value)
  {
    key(name);
    return value ? number(*value) : null();
  }

  /// The document so far.
  [[nodiscard]] std::string const& text() const noexcept { return out_; }
  /// The document, moved out; the writer is empty after.
  [[nodiscard]] std::string take() noexcept
  {
    levels_.clear();
    after_key_ = false;
    return std::move(out_);
  }

 private:
  struct level {
    bool lines;
    bool empty;
  };

  /// The separator before a value (or a key): none right after a key or as a container's first
  /// member; a new line and the level's indent in a container of lines.
  void before_value()
  {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (levels_.empty()) { return; }
    auto& current = levels_.back();
    if (!current.empty) { out_ += spaced_ ? (current.lines ? "," : ", ") : ","; }
    if (current.lines) { new_line(levels_.size()); }
    current.empty = false;
  }

  json_writer& open(char bracket, layout how)
  {
    before_value();
    out_ += bracket;
    levels_.push_back({how == layout::lines, true});
    return *this;
  }

  json_writer& close(char bracket)
  {
    if (!levels_.empty()) {
      auto const closing = levels_.back();
      levels_.pop_back();
      if (closing.lines && !closing.empty) { new_line(levels_.size()); }
    }
    out_ += bracket;
    return *this;
  }

  void new_line(std::size_t depth)
  {
    out_ += '\n';
    out_.append(2 * depth, ' ');
  }

  std::string out_;
  std::vector<level> levels_;
  bool after_key_{false};
  bool spaced_;
};

}  // namespace rmm::detail
