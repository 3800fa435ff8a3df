// SPDX-License-Identifier: Apache-2.0
#include "turnstile.hpp"

#include <thread>
#include <utility>

namespace rmm::replay {

namespace {

void pause() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

turnstile::turnstile(std::vector<std::size_t> thread_of_step, std::size_t threads)
  : thread_of_step_{std::move(thread_of_step)}, gates_(threads)
{
}

bool turnstile::wait_for(std::size_t thread, std::size_t step) noexcept
{
  // Spin briefly (the next step is usually a few hundred nanoseconds away), then sleep.
  constexpr int spins_before_sleeping = 256;
  auto& gate                          = gates_[thread];
  for (int spin = 0;; ++spin) {
    // The gate is read before the turn: a hand-over after this read changes the gate, and the
    // wait below returns at once.
    auto const changes = gate.changes.load();
    auto const current = next_.load();
    if (current == step) { return true; }
    if (current == stopped) { return false; }
    if (spin < spins_before_sleeping) {
      pause();
    } else {
      gate.changes.wait(changes);
      wakeups_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void turnstile::open(std::size_t step) noexcept
{
  next_.store(step);
  if (step >= thread_of_step_.size()) { return; }  // the last step ran: nobody waits for more
  // A thread that runs the next step too finds it open without being woken.
  if (step > 0 && thread_of_step_[step] == thread_of_step_[step - 1]) { return; }
  wake(thread_of_step_[step]);
}

void turnstile::stop() noexcept
{
  next_.store(stopped);
  for (std::size_t thread = 0; thread < gates_.size(); ++thread) { wake(thread); }
}

std::size_t turnstile::wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }

void turnstile::wake(std::size_t thread) noexcept
{
  auto& gate = gates_[thread];
  gate.changes.fetch_add(1);
  gate.changes.notify_one();
}

}  // namespace rmm::replay
