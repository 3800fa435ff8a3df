// SPDX-License-Identifier: Apache-2.0
#pragma once

// Replays an allocation log through a resource on one thread, in log order: what the tests and the
// sub-allocator benchmarks need (the multi-threaded replay tool is rmm-replay).

#include "allocation_log.hpp"

#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

namespace rmm::trace {

struct replay_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct replay_result {
  std::size_t allocations{};
  std::size_t frees{};
  std::size_t logged_failures{};      ///< "allocate failure" rows (not replayed)
  std::size_t peak_live_bytes{};      ///< as requested
  std::size_t peak_reserved_bytes{};  ///< from `reserved_bytes`, sampled after every allocation
};

/// Replays `events` through `mr`. Logged streams map as `builtin_stream` says (logged_stream.hpp);
/// the others to streams created for the replay. Live allocations left at the end are freed. `reserved_bytes`, if
/// given, reports what the resource holds from upstream. Throws replay_error naming the log line for a free of an
/// unknown pointer; allocation failures propagate.
replay_result replay_sequential(std::vector<event> const& events,
                                rmm::device_async_resource_ref mr,
                                std::function<std::size_t()> const& reserved_bytes = {});

}  // namespace rmm::trace
