// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gate every served call passes while the process's device memory may be paused
// (process_pause.hpp): closing it keeps new calls out of the stacks and waits until the calls
// inside have left, so that a pause sees the stacks at rest.
//
// A call costs two atomic additions on a counter of its own thread's shard (no cache line shared
// with other threads) and one load of the flag. Entering adds first and then reads the flag; closing
// sets the flag and then reads the counters: with both in one total order, either the call sees the
// gate closed or the closer sees the call inside, never neither.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rmm::shim {

namespace detail {
inline constexpr std::uint32_t no_gate_shard = ~std::uint32_t{0};
inline thread_local std::uint32_t gate_shard = no_gate_shard;  // constant-initialized: no guard to reach it
/// Gives the calling thread the next shard in turn.
[[nodiscard]] std::uint32_t take_gate_shard() noexcept;
}  // namespace detail

class pause_gate {
 public:
  static constexpr std::size_t shard_count = 64;

  /// A call inside the gate; leaves it when destroyed. Empty (inside() false) when the gate was
  /// closed: the call must not touch a stack.
  class pass {
   public:
    pass(pass const&)            = delete;
    pass& operator=(pass const&) = delete;
    pass(pass&& other) noexcept : shard_{other.shard_} { other.shard_ = nullptr; }
    pass& operator=(pass&&) = delete;
    ~pass()
    {
      if (shard_ != nullptr) { shard_->fetch_sub(1, std::memory_order_release); }
    }
    [[nodiscard]] bool inside() const noexcept { return shard_ != nullptr; }

   private:
    friend class pause_gate;
    explicit pass(std::atomic<std::int64_t>* shard) noexcept : shard_{shard} {}
    std::atomic<std::int64_t>* shard_;
  };

  /// Enters the gate, unless it is closed.
  [[nodiscard]] pass enter() noexcept
  {
    auto& inside = shards_[shard_index()].inside;
    inside.fetch_add(1, std::memory_order_seq_cst);
    if (!closed_.load(std::memory_order_seq_cst)) [[likely]] { return pass{&inside}; }
    inside.fetch_sub(1, std::memory_order_release);
    return pass{nullptr};
  }

  [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }

  /// Closes the gate and returns once no call is inside any more.
  void close_and_drain() noexcept;
  void open() noexcept { closed_.store(false, std::memory_order_seq_cst); }

 private:
  /// The calling thread's shard: threads take them in turn at their first call.
  [[nodiscard]] static std::size_t shard_index() noexcept
  {
    auto const index = detail::gate_shard;
    return index != detail::no_gate_shard ? index : detail::take_gate_shard();
  }

  struct alignas(64) shard {
    std::atomic<std::int64_t> inside{0};
  };
  std::array<shard, shard_count> shards_{};
  alignas(64) std::atomic<bool> closed_{false};
};

}  // namespace rmm::shim
