// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gate every served call passes while the process's device memory may be paused
// (process_pause.hpp): closing it keeps new calls out of the stacks and waits until the calls
// inside have left, so that a pause sees the stacks at rest.
//
// Each thread has a seat of its own, a count only it writes. A call raises its count, then reads
// whether the gate is closed; closing sets the flag, then reads every seat. That is Dekker's
// pattern, which needs a full fence between the write and the read on both sides. The caller's
// side gets it for free: the closer makes every thread of the process run one
// (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)), so a call costs two plain stores to its own cache
// line and two loads. Where the kernel does not offer that, each call fences itself.

#include <atomic>
#include <cstdint>

namespace rmm::shim {

namespace detail {
/// A thread's count of calls inside the gate (a thread record, thread_records.hpp).
struct gate_seat {
  alignas(64) std::atomic<std::uint32_t> inside{0};
};
inline thread_local gate_seat* own_seat = nullptr;  // constant-initialized: no guard to reach it
/// The calling thread's seat, made and listed at its first call; a shared seat, reached with
/// atomic additions, when that cannot be arranged (no memory).
[[nodiscard]] gate_seat* take_seat() noexcept;
/// Whether the closer can make every thread fence (membarrier), decided once at load.
[[nodiscard]] bool closer_fences_every_thread() noexcept;
}  // namespace detail

class pause_gate {
 public:
  /// A call inside the gate; leaves it when destroyed. Empty (inside() false) when the gate was
  /// closed: the call must not touch a stack.
  class pass {
   public:
    pass(pass const&)            = delete;
    pass& operator=(pass const&) = delete;
    pass(pass&& other) noexcept : seat_{other.seat_} { other.seat_ = nullptr; }
    pass& operator=(pass&&) = delete;
    ~pass()
    {
      if (seat_ != nullptr) { leave(*seat_); }
    }
    [[nodiscard]] bool inside() const noexcept { return seat_ != nullptr; }

   private:
    friend class pause_gate;
    explicit pass(detail::gate_seat* seat) noexcept : seat_{seat} {}
    detail::gate_seat* seat_;
  };

  /// Enters the gate, unless it is closed.
  [[nodiscard]] pass enter() noexcept
  {
    auto* seat = detail::own_seat;
    if (seat == nullptr) [[unlikely]] { seat = detail::take_seat(); }
    arrive(*seat);
    // Acquire: a call that enters after a resume sees what the resume wrote (a plain load on x86).
    if (!closed_.load(std::memory_order_acquire)) [[likely]] { return pass{seat}; }
    leave(*seat);
    return pass{nullptr};
  }

  [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }

  /// Closes the gate and returns once no call is inside any more.
  void close_and_drain() noexcept;
  void open() noexcept { closed_.store(false, std::memory_order_seq_cst); }

  /// fork() handlers: the list of seats is locked across the fork; a child keeps only its own.
  static void before_fork() noexcept;
  static void after_fork_in_parent() noexcept;
  static void after_fork_in_child() noexcept;

 private:
  static void arrive(detail::gate_seat& seat) noexcept
  {
    if (&seat != detail::own_seat) [[unlikely]] {  // the shared seat
      seat.inside.fetch_add(1, std::memory_order_seq_cst);
      return;
    }
    seat.inside.store(seat.inside.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (closer_fences_.load(std::memory_order_relaxed)) [[likely]] {
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the closer's membarrier fences this thread
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
  }
  static void leave(detail::gate_seat& seat) noexcept
  {
    if (&seat != detail::own_seat) [[unlikely]] {
      seat.inside.fetch_sub(1, std::memory_order_release);
      return;
    }
    seat.inside.store(seat.inside.load(std::memory_order_relaxed) - 1, std::memory_order_release);
  }

  inline static std::atomic<bool> closer_fences_{detail::closer_fences_every_thread()};
  alignas(64) std::atomic<bool> closed_{false};
};

}  // namespace rmm::shim
