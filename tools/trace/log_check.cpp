// SPDX-License-Identifier: Apache-2.0
#include "log_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>

namespace rmm::trace {

namespace {

/// Walks the log once, keeping the live allocations and where each pointer was last freed.
class pairing {
 public:
  pairing(std::vector<event> const& events, std::string const& name) : events_{events}, name_{name}
  {
    facts_.allocation_of.assign(events.size(), no_allocation);
  }

  log_facts run() &&
  {
    for (std::size_t index = 0; index < events_.size(); ++index) {
      switch (events_[index].kind) {
        case action::allocate: allocate(index); break;
        case action::free: free(index); break;
        case action::allocate_failure: ++facts_.logged_failures; break;
      }
    }
    facts_.left_live = live_.size() + live_null_.size();
    return std::move(facts_);
  }

 private:
  [[nodiscard]] event const& at(std::size_t index) const { return events_[index]; }

  [[noreturn]] void fail(event const& e, std::string const& what) const
  {
    throw parse_error{fmt::format("{}:{}: {}", name_, e.line, what)};
  }

  void allocate(std::size_t index)
  {
    auto const& e = at(index);
    if (e.pointer == 0) {
      // A zero-byte allocation may legitimately return null, several times over.
      if (e.size != 0) {
        fail(e, fmt::format("allocate of {} bytes logged with a null pointer (a failed allocation is "
                            "logged as 'allocate failure')",
                            e.size));
      }
      live_null_.push_back(index);
    } else if (auto const [it, inserted] = live_.try_emplace(e.pointer, index); !inserted) {
      fail(e, fmt::format("allocate of {:#x}, which is still allocated (allocated at line {} and not freed since)",
                          e.pointer, at(it->second).line));
    }
    freed_at_.erase(e.pointer);
    ++facts_.allocations;
    live_bytes_ += e.size;
    facts_.peak_live_bytes = std::max(facts_.peak_live_bytes, live_bytes_);
  }

  void free(std::size_t index)
  {
    auto const& e          = at(index);
    std::size_t allocation = no_allocation;
    if (e.pointer == 0 && e.size == 0 && !live_null_.empty()) {
      allocation = live_null_.back();
      live_null_.pop_back();
    } else if (auto const it = live_.find(e.pointer); it != live_.end()) {
      allocation = it->second;
      if (at(allocation).size != e.size) {
        fail(e, fmt::format("free of {:#x} with size {}, but it was allocated with size {} at line {}", e.pointer,
                            e.size, at(allocation).size, at(allocation).line));
      }
      live_.erase(it);
    } else if (auto const freed = freed_at_.find(e.pointer); freed != freed_at_.end()) {
      fail(e, fmt::format("double free of {:#x} (allocated at line {}, already freed at line {})", e.pointer,
                          at(freed->second.first).line, at(freed->second.second).line));
    } else {
      fail(e, fmt::format("free of {:#x}, which was never allocated in this log (was the log cut at its start?)",
                          e.pointer));
    }
    freed_at_[e.pointer]        = {allocation, index};
    facts_.allocation_of[index] = allocation;
    ++facts_.frees;
    live_bytes_ -= at(allocation).size;
  }

  std::vector<event> const& events_;
  std::string const& name_;
  log_facts facts_;
  std::unordered_map<std::uintptr_t, std::size_t> live_;  // pointer -> index of its allocate event
  std::vector<std::size_t> live_null_;                    // zero-byte allocations logged as null
  // pointer -> (allocate, free) event indices of its last lifetime, for double-free messages
  std::unordered_map<std::uintptr_t, std::pair<std::size_t, std::size_t>> freed_at_;
  std::size_t live_bytes_{};
};

}  // namespace

log_facts check_log(std::vector<event> const& events, std::string const& name) { return pairing{events, name}.run(); }

}  // namespace rmm::trace
