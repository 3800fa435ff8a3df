// SPDX-License-Identifier: Apache-2.0
#pragma once

// Consistency of an allocation log, beyond its syntax: every free names a live allocation of the
// same size, and no pointer is handed out twice while it is live. A replay can then trust the
// pairs it is given; a log that breaks these rules was cut, merged or corrupted, and replaying it
// would measure something that never happened.

#include "allocation_log.hpp"

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace rmm::trace {

/// allocation_of[i] for an event that is not a free.
inline constexpr std::size_t no_allocation = std::numeric_limits<std::size_t>::max();

/// What a consistent log implies.
struct log_facts {
  /// Per event: for a free, the index (in the event list) of the allocate event it frees;
  /// no_allocation for the other actions.
  std::vector<std::size_t> allocation_of;
  std::size_t allocations{};
  std::size_t frees{};
  std::size_t logged_failures{};  ///< "allocate failure" rows
  std::size_t left_live{};        ///< allocations the log never frees
  std::size_t peak_live_bytes{};  ///< the most bytes live at once, as requested
};

/// Pairs every free with its allocation. Throws parse_error "<name>:<line>: ..." for a free of a
/// pointer that was never allocated, a double free, a free whose size differs from the
/// allocation's, a pointer allocated again while still live, and a successful allocation of
/// bytes logged with a null pointer. Zero-byte allocations may share the null pointer.
[[nodiscard]] log_facts check_log(std::vector<event> const& events, std::string const& name);

}  // namespace rmm::trace
