// SPDX-License-Identifier: Apache-2.0
#pragma once

// The figures of a run, as an aligned table for people and as JSON for scripts.

#include "replay_plan.hpp"
#include "threaded_replay.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rmm::replay {

/// One log replayed through one resource stack.
struct replay_row {
  std::string log;
  std::string resource;     ///< the name as given
  std::string description;  ///< "binning over pool over cuda"
  std::size_t events{};
  std::size_t threads{};
  std::size_t streams{};
  std::size_t peak_live_bytes{};  ///< from the log
  std::size_t logged_failures{};
  std::size_t left_live{};  ///< allocations the log never frees
  replay_measurement measurement;
  std::optional<std::size_t> peak_reserved_bytes;  ///< unset when the replay failed or the stack could not be built
  std::optional<std::string> setup_error;          ///< the stack could not be built

  [[nodiscard]] bool failed() const noexcept { return setup_error.has_value() || measurement.failure.has_value(); }
  /// 1 - peak live / peak reserved; unset without a reserved figure.
  [[nodiscard]] std::optional<double> fragmentation() const noexcept;
};

/// Where the run happened, for the heading of both outputs.
struct run_context {
  std::string device;  ///< "NVIDIA H200 (device 0, 139.80 GiB)" or "simulated device of 80.00 GiB on ..."
  std::optional<std::size_t> simulated_device_size;
};

[[nodiscard]] std::string format_table(run_context const& context, std::vector<replay_row> const& rows);
[[nodiscard]] std::string format_json(run_context const& context, std::vector<replay_row> const& rows);

/// "12.3 ms", "1.25 s", "850 us".
[[nodiscard]] std::string format_duration(std::chrono::nanoseconds duration);

}  // namespace rmm::replay
