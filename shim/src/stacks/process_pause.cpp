// SPDX-License-Identifier: Apache-2.0
#include "stacks/process_pause.hpp"

#include <chrono>
#include <utility>
#include <vector>

namespace rmm::shim {

bool process_pause::wait_for_resume(std::chrono::steady_clock::time_point deadline) noexcept
{
  std::unique_lock lock{mutex_};
  return running_.wait_until(lock, deadline, [this] { return !closed_; });
}

void process_pause::count_waited(bool timed_out) noexcept
{
  std::lock_guard lock{mutex_};
  ++last_.waited_allocations;
  if (timed_out) { ++last_.timed_out_allocations; }
}

bool process_pause::hold_free(kept_block const& block) noexcept
{
  std::lock_guard lock{mutex_};
  if (!closed_) { return false; }
  try {
    held_.push_back(block);
  } catch (...) {  // no memory to remember it: the block stays out of the stack, leaked, not reused
  }
  return true;
}

bool process_pause::close()
{
  {
    std::lock_guard lock{mutex_};
    if (closed_) { return false; }
    held_.reserve(held_.size() + 1024);  // most frees made while paused are remembered without allocating
    closed_ = true;
  }
  gate.close_and_drain();
  return true;
}

std::vector<kept_block> process_pause::open()
{
  std::vector<kept_block> held;
  {
    std::lock_guard lock{mutex_};
    closed_ = false;
    paused_ = false;
    gate.open();
    held.swap(held_);
  }
  running_.notify_all();
  return held;
}

void process_pause::paused(std::size_t device_bytes, std::size_t saved_bytes, bool staged, double milliseconds) noexcept
{
  std::lock_guard lock{mutex_};
  paused_ = true;
  last_.pauses += 1;
  last_.device_bytes = device_bytes;
  last_.saved_bytes  = saved_bytes;
  last_.staged       = staged;
  last_.pause_ms     = milliseconds;
}

void process_pause::resumed(double milliseconds) noexcept
{
  std::lock_guard lock{mutex_};
  last_.resume_ms = milliseconds;
}

bool process_pause::faulted(int device, std::string const& error) noexcept
{
  std::lock_guard lock{mutex_};
  if (last_.fault_device >= 0) { return false; }
  try {
    last_.fault_error = error;
  } catch (...) {  // no memory for the name: the device is still known
  }
  last_.fault_device = device;
  return true;
}

void process_pause::forget_device(int device) noexcept
{
  std::lock_guard lock{mutex_};
  std::erase_if(held_, [device](kept_block const& block) { return block.device == device; });
}

process_pause::summary process_pause::status() const
{
  std::lock_guard lock{mutex_};
  auto result       = last_;
  result.paused     = paused_;
  result.closed     = closed_;
  result.held_frees = held_.size();
  return result;
}

}  // namespace rmm::shim
