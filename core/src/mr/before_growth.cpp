// SPDX-License-Identifier: Apache-2.0
#include <rmm/mr/before_growth.hpp>

#include <atomic>
#include <cstdio>
#include <new>

namespace rmm::mr {

namespace {

struct hook {
  before_growth_callback callback;
  void* context;
  hook const* older;  // the record made before this one
};

std::atomic<hook const*> current_hook{nullptr};
// Every record ever made, newest first. Records are never freed (a resource may still be reading
// the one being replaced, and hooks are set a handful of times per process); this list keeps them
// reachable, so that leak checkers do not take them for lost.
std::atomic<hook const*> every_hook{nullptr};

}  // namespace

void set_before_growth_callback(before_growth_callback callback, void* context) noexcept
{
  if (callback == nullptr) {
    current_hook.store(nullptr, std::memory_order_release);
    return;
  }
  auto* record = new (std::nothrow) hook{callback, context, every_hook.load(std::memory_order_relaxed)};
  if (record == nullptr) {
    std::fputs("rmm: out of host memory to set the before-growth hook; it stays as it was\n", stderr);
    return;
  }
  while (!every_hook.compare_exchange_weak(record->older, record, std::memory_order_acq_rel)) {}
  current_hook.store(record, std::memory_order_release);
}

namespace detail {

bool call_before_growth(cuda_device_id device, std::size_t bytes) noexcept
{
  auto const* h = current_hook.load(std::memory_order_acquire);
  return h != nullptr && h->callback(h->context, device, bytes);
}

}  // namespace detail

}  // namespace rmm::mr
