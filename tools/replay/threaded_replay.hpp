// SPDX-License-Identifier: Apache-2.0
#pragma once

// Replays a plan through one resource with the log's threads and streams: every logged thread gets
// its own std::thread, every logged stream its own CUDA stream, and the events run one at a time
// in log order (a thread waits until the event before its next one has completed), so the
// resource sees the calls the application made, from as many threads, in the same order.

#include "replay_plan.hpp"

#include <rmm/resource_ref.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace rmm::replay {

/// An allocation the log says succeeded, refused by the replayed resource (or any other error).
struct replay_failure {
  std::size_t line;     ///< in the log
  std::string message;  ///< what the resource said
};

struct replay_measurement {
  std::chrono::nanoseconds wall{};         ///< from the first event to the last
  std::chrono::nanoseconds in_resource{};  ///< inside allocate/deallocate, summed over threads
  std::size_t events_replayed{};
  std::size_t reproduced_failures{};      ///< "allocate failure" rows that failed again
  std::size_t unexpected_successes{};     ///< "allocate failure" rows that succeeded (freed at once)
  std::size_t wakeups{};                  ///< times a replaying thread woke from sleeping until its turn
  std::optional<replay_failure> failure;  ///< set when the replay stopped early
};

/// What runs on the replaying thread after each replayed step (its index in the plan), in log
/// order: to sample what the resource holds.
using step_observer = std::function<void(std::size_t step)>;

/// Replays `plan` through `mr`, calling `after_step` after every step. Allocations the log leaves
/// live are freed after the timed part; the streams are synchronized before returning.
[[nodiscard]] replay_measurement replay_threaded(replay_plan const& plan,
                                                 rmm::device_async_resource_ref mr,
                                                 step_observer const& after_step = {});

}  // namespace rmm::replay
