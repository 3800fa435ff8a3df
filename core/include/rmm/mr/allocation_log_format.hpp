// SPDX-License-Identifier: Apache-2.0
#pragma once

// The allocation event log's CSV format, written by logging_resource_adaptor and read by
// rmm-replay: one header line, then one row per event,
//
//   Thread,Time,Action,Pointer,Size,Stream
//
// Time is the local time of day ("HH:MM:SS.ffffff"), Pointer and Stream are hex, Size is bytes.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace rmm::mr::allocation_log {

/// The first line of every log.
inline constexpr std::string_view header = "Thread,Time,Action,Pointer,Size,Stream";

/// The number of columns of the header and of every row.
inline constexpr std::size_t columns = 6;

/// What a row records. An `allocate_failure` row has pointer 0x0: the allocation threw.
enum class action : unsigned char { allocate, allocate_failure, free };

/**
 * @brief The Action column's text for `a`.
 *
 * @param a the action
 * @return "allocate", "allocate failure" or "free"
 */
[[nodiscard]] constexpr std::string_view action_name(action a) noexcept
{
  switch (a) {
    case action::allocate: return "allocate";
    case action::allocate_failure: return "allocate failure";
    case action::free: return "free";
  }
  return "?";
}

/**
 * @brief The action an Action column names.
 *
 * @param text the column's text, exactly as action_name writes it
 * @return the action; empty for anything else
 */
[[nodiscard]] constexpr std::optional<action> parse_action(std::string_view text) noexcept
{
  for (auto const a : {action::allocate, action::allocate_failure, action::free}) {
    if (text == action_name(a)) { return a; }
  }
  return std::nullopt;
}

}  // namespace rmm::mr::allocation_log
