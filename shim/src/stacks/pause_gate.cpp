// SPDX-License-Identifier: Apache-2.0
#include "stacks/pause_gate.hpp"

#include "stacks/thread_records.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <thread>

namespace rmm::shim {

namespace {

void seat_left(void* value) noexcept;

/// Every thread's seat (thread_records.hpp).
thread_records<detail::gate_seat>& seats()
{
  static auto* r = new thread_records<detail::gate_seat>{seat_left};  // never destroyed: threads end during exit too
  return *r;
}

/// The seat of calls whose thread could not get one of its own.
detail::gate_seat shared_seat;

void seat_left(void* value) noexcept
{
  auto* seat = static_cast<detail::gate_seat*>(value);
  if (detail::own_seat == seat) { detail::own_seat = nullptr; }
  seats().remove(seat, [](detail::gate_seat&) {});
}

long membarrier(int command) noexcept { return ::syscall(SYS_membarrier, command, 0, 0); }

/// Whether the kernel lets this process make all its threads fence at once; registers for it.
bool register_membarrier() noexcept
{
  auto const supported = membarrier(MEMBARRIER_CMD_QUERY);
  return supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
         membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

}  // namespace

detail::gate_seat* detail::take_seat() noexcept
{
  if (auto* seat = seats().add()) {
    own_seat = seat;
    return seat;
  }
  return &shared_seat;
}

bool detail::closer_fences_every_thread() noexcept { return register_membarrier(); }

void pause_gate::close_and_drain() noexcept
{
  closed_.store(true, std::memory_order_seq_cst);
  // Every thread fences now: a call that raised its seat before this sees the flag, or its seat is
  // seen raised below. Should the kernel refuse, the calls fence themselves from now on, and the
  // closer waits out those that may have passed without.
  if (closer_fences_.load(std::memory_order_relaxed) && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    closer_fences_.store(false, std::memory_order_seq_cst);
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  auto const busy = [](detail::gate_seat const& seat) { return seat.inside.load(std::memory_order_seq_cst) != 0; };
  for (;;) {
    bool any = busy(shared_seat);
    {
      auto& r = seats();
      std::lock_guard lock{r.mutex()};
      for (auto const* seat : r.records()) { any = any || busy(*seat); }
    }
    if (!any) { return; }
    // A call inside finishes what it does (an allocation may wait for the device a while).
    std::this_thread::sleep_for(std::chrono::microseconds{50});
  }
}

void pause_gate::before_fork() noexcept { seats().mutex().lock(); }

void pause_gate::after_fork_in_parent() noexcept { seats().mutex().unlock(); }

void pause_gate::after_fork_in_child() noexcept
{
  auto& r = seats();
  r.records().clear();  // the other threads do not exist here, nor their calls
  shared_seat.inside.store(0, std::memory_order_relaxed);
  if (auto* mine = detail::own_seat; mine != nullptr) {
    mine->inside.store(0, std::memory_order_relaxed);
    r.records().push_back(mine);  // cannot allocate: it was in the list, whose capacity clear() kept
  }
  r.mutex().unlock();
}

}  // namespace rmm::shim
