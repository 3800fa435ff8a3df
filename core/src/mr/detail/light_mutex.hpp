// SPDX-License-Identifier: Apache-2.0
#pragma once

// The lock of a stream's arena, taken twice per allocation and free pair: an uncontended lock or
// unlock is one atomic instruction, where std::mutex makes two calls into pthreads. Contended, it
// spins briefly (the sections it guards are a few hundred instructions long), then sleeps on the
// atomic (a futex on Linux) rather than burning the core. Three states, so that an unlock wakes a
// sleeper only when there may be one.

#include <atomic>
#include <cstdint>

namespace rmm::mr::detail {

class light_mutex {
 public:
  light_mutex()                              = default;
  light_mutex(light_mutex const&)            = delete;
  light_mutex& operator=(light_mutex const&) = delete;

  void lock() noexcept
  {
    if (!try_lock()) [[unlikely]] { lock_contended(); }
  }

  [[nodiscard]] bool try_lock() noexcept
  {
    auto expected = unlocked;
    return state_.compare_exchange_strong(expected, locked, std::memory_order_acquire, std::memory_order_relaxed);
  }

  void unlock() noexcept
  {
    if (state_.exchange(unlocked, std::memory_order_release) == contended) [[unlikely]] { state_.notify_one(); }
  }

 private:
  static constexpr std::uint32_t unlocked  = 0;
  static constexpr std::uint32_t locked    = 1;
  static constexpr std::uint32_t contended = 2;  // locked, and someone may sleep on it

  void lock_contended() noexcept
  {
    constexpr int spins = 100;
    for (int i = 0; i < spins; ++i) {
      if (state_.load(std::memory_order_relaxed) == unlocked && try_lock()) { return; }
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    // Whoever takes it this way leaves it marked contended: its unlock then wakes the next sleeper.
    while (state_.exchange(contended, std::memory_order_acquire) != unlocked) {
      state_.wait(contended, std::memory_order_relaxed);
    }
  }

  std::atomic<std::uint32_t> state_{unlocked};
};

}  // namespace rmm::mr::detail
