// SPDX-License-Identifier: Apache-2.0
#include "pause/pause_faults.hpp"

#include "driver/contexts.hpp"
#include "driver/real_driver.hpp"
#include "state.hpp"

#include <fmt/format.h>

#include <pthread.h>

#include <array>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace rmm::shim {

namespace {

/// The errors a CUDA context keeps once its work failed: every later call of that context answers
/// with them. Others (not ready, deinitialized at exit) are not faults.
bool is_sticky(CUresult result) noexcept
{
  static constexpr std::array sticky{CUDA_ERROR_ILLEGAL_ADDRESS,       CUDA_ERROR_LAUNCH_FAILED,
                                     CUDA_ERROR_ILLEGAL_INSTRUCTION,   CUDA_ERROR_MISALIGNED_ADDRESS,
                                     CUDA_ERROR_INVALID_ADDRESS_SPACE, CUDA_ERROR_INVALID_PC,
                                     CUDA_ERROR_HARDWARE_STACK_ERROR,  CUDA_ERROR_ASSERT,
                                     CUDA_ERROR_LAUNCH_TIMEOUT,        CUDA_ERROR_ECC_UNCORRECTABLE};
  return std::find(sticky.begin(), sticky.end(), result) != sticky.end();
}

/// The watch now running, if any: its thread holds it too, and leaves when `stop` is set.
struct watch {
  std::mutex mutex;
  std::condition_variable wake;
  bool stop{false};
};

std::mutex watch_mutex;
std::shared_ptr<watch> current_watch;  // guarded by watch_mutex

constexpr auto watch_interval = std::chrono::milliseconds{100};

void stop(std::shared_ptr<watch> const& w) noexcept
{
  if (!w) { return; }
  {
    std::lock_guard lock{w->mutex};
    w->stop = true;
  }
  w->wake.notify_all();
}

}  // namespace

std::string faulted_while_paused(std::vector<int> const& devices)
{
  for (auto const device : devices) {
    CUresult result = CUDA_SUCCESS;
    {
      scoped_device_context const on_device{device};
      // Any call of a faulted context answers its error; a query waits for nothing.
      result = real()->stream_query(CU_STREAM_LEGACY);
    }
    if (!is_sticky(result)) { continue; }
    auto const error = driver_error_name(result);
    if (state().pause.faulted(device, error)) {
      fmt::print(stderr,
                 "rmm shim: the CUDA context of device {} failed while the process's device memory was paused "
                 "({}): a kernel most likely touched paused memory, whose addresses have nothing mapped until the "
                 "resume. Pause between phases, when no kernel runs. A failed context cannot be used again; the "
                 "contents stay in host memory, but the process must be restarted.\n",
                 device, error);
      std::fflush(stderr);
    }
    return fmt::format(
      "the CUDA context of device {} failed while paused ({}): a kernel most likely touched "
      "paused memory. A failed context cannot be used again: restart the process",
      device, error);
  }
  return {};
}

void watch_for_faults(std::vector<int> devices) noexcept
{
  try {
    auto const w = std::make_shared<watch>();
    {
      std::lock_guard lock{watch_mutex};
      stop(std::exchange(current_watch, w));
    }
    std::thread{[w, devices = std::move(devices)] {
      (void)::pthread_setname_np(::pthread_self(), "rmm-pause-watch");
      std::unique_lock lock{w->mutex};
      while (!w->wake.wait_for(lock, watch_interval, [&] { return w->stop; })) {
        if (exiting()) { return; }
        lock.unlock();
        bool const faulted = !faulted_while_paused(devices).empty();
        lock.lock();
        if (faulted) { return; }  // said once; the resume asks again
      }
    }}.detach();
  } catch (...) {  // no memory or no thread: the resume still asks
  }
}

void stop_watching_for_faults() noexcept
{
  std::lock_guard lock{watch_mutex};
  stop(std::exchange(current_watch, nullptr));
}

}  // namespace rmm::shim
