// SPDX-License-Identifier: Apache-2.0
#include "pause/device_work_wait.hpp"

#include "driver/contexts.hpp"
#include "driver/real_driver.hpp"

#include <fmt/format.h>

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace rmm::shim {

namespace {

/// What the waiting thread and the caller share; the thread keeps it alive after the caller left.
struct shared_wait {
  std::mutex mutex;
  std::condition_variable finished_changed;
  bool finished{false};
  std::string error;
};

void synchronize(std::vector<int> const& devices, shared_wait& wait) noexcept
{
  std::string error;
  for (auto const device : devices) {
    scoped_device_context const on_device{device};
    if (auto const r = real()->ctx_synchronize(); r != CUDA_SUCCESS) {
      try {
        error = fmt::format("waiting for the work queued on device {} failed: {}", device, driver_error_name(r));
      } catch (...) {
        error = "waiting for the work queued on a device failed";
      }
      break;
    }
  }
  std::lock_guard lock{wait.mutex};
  wait.error    = std::move(error);
  wait.finished = true;
  wait.finished_changed.notify_all();
}

}  // namespace

device_wait_result wait_for_device_work(std::vector<int> const& devices,
                                        std::chrono::steady_clock::time_point deadline,
                                        std::function<bool()> const& cancelled)
{
  auto wait = std::make_shared<shared_wait>();
  try {
    std::thread{[wait, devices] {
      (void)::pthread_setname_np(::pthread_self(), "rmm-devwait");
      synchronize(devices, *wait);
    }}.detach();
  } catch (std::system_error const&) {  // no thread: waited for here, without a limit
    synchronize(devices, *wait);
  }
  std::unique_lock lock{wait->mutex};
  for (;;) {
    if (wait->finished) { return {wait->error.empty() ? device_wait_end::done : device_wait_end::failed, wait->error}; }
    if (cancelled()) { return {device_wait_end::cancelled, {}}; }
    if (std::chrono::steady_clock::now() >= deadline) { return {device_wait_end::timed_out, {}}; }
    auto const next = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds{20});
    wait->finished_changed.wait_until(lock, next);
  }
}

}  // namespace rmm::shim
