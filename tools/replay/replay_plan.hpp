// SPDX-License-Identifier: Apache-2.0
#pragma once

// A checked log turned into what the threaded replay executes: every event with its thread and
// stream as small indices, and every free pointing at the allocation it releases.

#include <allocation_log.hpp>
#include <log_check.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rmm::replay {

struct replay_step {
  rmm::trace::action kind;
  std::size_t bytes;
  std::size_t stream;      ///< index into replay_plan::logged_streams
  std::size_t allocation;  ///< for a free: index of the step that allocated; else the step's own index
  std::size_t line;        ///< in the log, for messages
  double time_seconds;     ///< as logged: since midnight
};

struct replay_plan {
  std::string log_name;
  std::vector<replay_step> steps;                      ///< in log order
  std::vector<std::vector<std::size_t>> thread_steps;  ///< per logged thread, its step indices in order
  std::vector<std::uint64_t> logged_threads;           ///< thread ids as logged, in order of first appearance
  std::vector<std::uintptr_t> logged_streams;          ///< stream handles as logged, in order of first appearance
  rmm::trace::log_facts facts;                         ///< counts and peak live bytes (allocation_of moved out)
};

/// Checks the log (rmm::trace::check_log; throws rmm::trace::parse_error) and builds the plan.
[[nodiscard]] replay_plan make_replay_plan(std::vector<rmm::trace::event> const& events, std::string const& log_name);

}  // namespace rmm::replay
