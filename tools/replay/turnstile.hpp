// SPDX-License-Identifier: Apache-2.0
#pragma once

// The hand-over of the threaded replay: lets exactly one replaying thread run, the one whose step
// is next in log order, and wakes only that thread when its turn comes, so a replay of a log with
// thousands of threads costs no more per event than one with two.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace rmm::replay {

class turnstile {
 public:
  /// `thread_of_step[s]` is the replaying thread (an index below `threads`) that runs step s.
  turnstile(std::vector<std::size_t> thread_of_step, std::size_t threads);

  /// Blocks `thread` until `step` is next; false if the replay was stopped.
  [[nodiscard]] bool wait_for(std::size_t thread, std::size_t step) noexcept;

  /// Makes `step` the next one and wakes its thread (called by the thread that ran the step
  /// before, or once with 0 to start).
  void open(std::size_t step) noexcept;

  /// Ends the replay: every waiting thread returns false.
  void stop() noexcept;

  /// Times a thread woke from sleeping while it waited for its turn.
  [[nodiscard]] std::size_t wakeups() const noexcept;

 private:
  static constexpr std::size_t stopped     = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t not_started = stopped - 1;

  /// What a sleeping thread waits on: changed by whoever gives it the turn. 32 bits, so the wait
  /// is a futex on this very word and a wake reaches this thread alone. One cache line each.
  struct alignas(64) thread_gate {
    std::atomic<std::uint32_t> changes{0};
  };

  void wake(std::size_t thread) noexcept;

  std::vector<std::size_t> thread_of_step_;
  std::vector<thread_gate> gates_;  // per replaying thread
  std::atomic<std::size_t> next_{not_started};
  std::atomic<std::size_t> wakeups_{0};
};

}  // namespace rmm::replay
