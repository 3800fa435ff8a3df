// SPDX-License-Identifier: Apache-2.0
#pragma once

// The pause of a process's device memory: its state, the gate the served calls pass, the frees
// made while paused, and what the report says of it. Pausing and resuming themselves are in
// pause_control.hpp.
//
// While the gate is closed (pausing, paused, resuming), an allocation waits for the resume, up to
// the `pause_timeout` setting, and then fails with out of memory; a free is held and applied at the
// resume (the block is the program's no longer, and its contents are of no interest); the stacks
// are left alone.

#include "stacks/pause_gate.hpp"
#include "stacks/thread_cache.hpp"  // kept_block

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace rmm::shim {

class process_pause {
 public:
  pause_gate gate;

  /// An allocation found the gate closed: waits until the process runs again or `deadline` passes.
  /// True: enter the gate again; false: the deadline passed.
  [[nodiscard]] bool wait_for_resume(std::chrono::steady_clock::time_point deadline) noexcept;
  /// Counts an allocation that waited for a resume, and whether it gave up at its deadline.
  void count_waited(bool timed_out) noexcept;
  /// A free found the gate closed: true when the block is held for the resume, false when the gate
  /// opened meanwhile (the caller frees it as usual).
  [[nodiscard]] bool hold_free(kept_block const& block) noexcept;

  /// Closes the gate and waits for the calls inside. False when a pause is in place already.
  [[nodiscard]] bool close();
  /// Opens the gate and wakes the waiting allocations; returns the frees held meanwhile.
  [[nodiscard]] std::vector<kept_block> open();
  /// Marks the process paused (the gate stays closed) with what the pause did.
  void paused(std::size_t device_bytes, std::size_t saved_bytes, bool staged, double milliseconds) noexcept;
  /// What the last resume took.
  void resumed(double milliseconds) noexcept;
  /// A paused device's context failed (pause_faults.hpp): true the first time, when it is to be said.
  [[nodiscard]] bool faulted(int device, std::string const& error) noexcept;
  /// The device was reset: the frees held for its blocks go with its memory.
  void forget_device(int device) noexcept;

  /// A resume asks the pause under way to give up while it still waits for device work; a pause
  /// clears the request when it begins.
  void cancel() noexcept { cancelled_.store(true, std::memory_order_release); }
  [[nodiscard]] bool cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }
  void clear_cancel() noexcept { cancelled_.store(false, std::memory_order_release); }

  /// One pause or resume at a time: held by whoever pauses or resumes.
  [[nodiscard]] std::mutex& operation() noexcept { return operation_; }

  /// What the report says.
  struct summary {
    bool paused{false};
    bool closed{false};  ///< the gate: closed while pausing, paused and resuming
    std::uint64_t pauses{0};
    std::size_t device_bytes{0};  ///< given back by the last pause
    std::size_t saved_bytes{0};   ///< contents the last pause kept in host memory
    bool staged{true};            ///< copied through page-locked staging (at the link's speed)
    double pause_ms{0};           ///< the last pause, from the request to the memory given back
    double resume_ms{0};          ///< the last resume
    std::size_t held_frees{0};    ///< frees waiting for the resume now
    std::uint64_t waited_allocations{0};
    std::uint64_t timed_out_allocations{0};
    int fault_device{-1};     ///< a device whose context failed while paused, or -1
    std::string fault_error;  ///< its error
  };
  [[nodiscard]] summary status() const;

 private:
  std::mutex operation_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mutex_;  // what follows
  std::condition_variable running_;
  bool closed_{false};
  bool paused_{false};
  std::vector<kept_block> held_;
  summary last_{};
};

}  // namespace rmm::shim
