// SPDX-License-Identifier: Apache-2.0
#include "replay_plan.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace rmm::replay {

namespace {

/// Small dense indices for values in order of first appearance.
template <class Value>
class index_of_first_appearance {
 public:
  explicit index_of_first_appearance(std::vector<Value>& values) : values_{values} {}

  std::size_t operator()(Value value)
  {
    auto const [it, inserted] = index_.try_emplace(value, values_.size());
    if (inserted) { values_.push_back(value); }
    return it->second;
  }

 private:
  std::vector<Value>& values_;
  std::unordered_map<Value, std::size_t> index_;
};

}  // namespace

replay_plan make_replay_plan(std::vector<rmm::trace::event> const& events, std::string const& log_name)
{
  replay_plan plan{};
  plan.log_name            = log_name;
  plan.facts               = rmm::trace::check_log(events, log_name);
  auto const allocation_of = std::move(plan.facts.allocation_of);
  plan.facts.allocation_of.clear();

  index_of_first_appearance<std::uint64_t> thread_index{plan.logged_threads};
  index_of_first_appearance<std::uintptr_t> stream_index{plan.logged_streams};
  plan.steps.reserve(events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    auto const& e      = events[i];
    auto const thread  = thread_index(e.thread);
    auto const stream  = stream_index(e.stream);
    auto const pairing = e.kind == rmm::trace::action::free ? allocation_of[i] : i;
    plan.steps.push_back(replay_step{e.kind, e.size, stream, pairing, e.line, e.time_seconds});
    plan.thread_steps.resize(std::max(plan.thread_steps.size(), thread + 1));
    plan.thread_steps[thread].push_back(i);
  }
  return plan;
}

}  // namespace rmm::replay
