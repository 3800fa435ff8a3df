// SPDX-License-Identifier: Apache-2.0
#pragma once

// A picture of a replay: the log's live bytes and each resource's reserved bytes over the log's
// time, with the peaks marked, as a self-contained SVG (no plotting library, no script, no fonts
// beyond the viewer's sans-serif).

#include "replay_plan.hpp"

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace rmm::replay {

class timeline {
 public:
  /// Live bytes over time come from the plan itself; resources add their reserved bytes.
  explicit timeline(replay_plan const& plan);

  /// Starts the series of the next resource replayed; record() adds to it.
  void begin(std::string resource);

  /// What the current resource holds after `step` of the plan (any replaying thread).
  void record(std::size_t step, std::size_t reserved_bytes);

  /// The SVG document.
  [[nodiscard]] std::string svg() const;

 private:
  struct series {
    std::string name;
    std::vector<std::pair<double, std::size_t>> points;  ///< (seconds since the first event, bytes)
  };

  replay_plan const& plan_;
  double start_seconds_{0};
  series live_;
  std::vector<series> reserved_;
  std::mutex mutex_;
};

}  // namespace rmm::replay
