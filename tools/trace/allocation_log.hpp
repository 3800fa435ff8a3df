// SPDX-License-Identifier: Apache-2.0
#pragma once

// Allocation event logs in the logging_resource_adaptor's CSV format (<rmm/mr/allocation_log_format.hpp>).
// Files may be gzip-compressed. Parsing is strict: a malformed row is an error naming its line.

#include <rmm/mr/allocation_log_format.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rmm::trace {

using action = rmm::mr::allocation_log::action;

struct event {
  std::uint64_t thread;
  double time_seconds;  ///< since midnight, as logged ("HH:MM:SS.ffffff")
  action kind;
  std::uintptr_t pointer;
  std::size_t size;
  std::uintptr_t stream;
  std::size_t line;  ///< 1-based line in the file, for messages
};

/// A malformed log: the message names the file, the line and what was wrong.
struct parse_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The longest line a log may have, its line end left out. A row is at most about 120 bytes; a
/// longer line means the file is no allocation log (a binary file, an endless stream such as
/// /dev/zero), and reading stops there instead of holding all of it.
inline constexpr std::size_t max_line_bytes = std::size_t{64} << 10;

/// What to do with a log whose last row is cut off (the process writing it was killed): refuse it,
/// saying so, or keep the rows before it.
enum class cut_off_row { refuse, drop };

struct log_contents {
  std::vector<event> events;
  std::size_t dropped_line{0};  ///< the cut-off last row that was left out (0: none)
};

/// Reads a whole log (plain or .gz). Throws parse_error.
[[nodiscard]] log_contents read_log(std::string const& path, cut_off_row cut_off);
[[nodiscard]] std::vector<event> read_log(std::string const& path);

/// Parses log text; `name` is used in messages.
[[nodiscard]] log_contents parse_log(std::string const& text, std::string const& name, cut_off_row cut_off);
[[nodiscard]] std::vector<event> parse_log(std::string const& text, std::string const& name);

}  // namespace rmm::trace
