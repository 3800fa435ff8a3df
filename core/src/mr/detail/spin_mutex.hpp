#pragma once

// A small lock for the sub-allocators' per-stream arenas: held for a few dozen instructions and
// almost never contended (each stream has its own), where std::mutex's system-call-capable path
// costs more than the work it protects. Spins briefly, then yields.

#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace rmm::mr::detail {

class spin_mutex {
 public:
  void lock() noexcept
  {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64) {
          pause();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  [[nodiscard]] bool try_lock() noexcept
  {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static void pause() noexcept
  {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }

  std::atomic<bool> locked_{false};
};

}  // namespace rmm::mr::detail
