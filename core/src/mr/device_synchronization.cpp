// SPDX-License-Identifier: Apache-2.0
#include <rmm/mr/device_synchronization.hpp>

#include <atomic>
#include <cstdio>
#include <new>

namespace rmm::mr {

namespace {

struct check_record {
  device_synchronization_check check;
  void* context;
  check_record const* older;  // the record made before this one
};

// The check and its context are read together through one pointer. Records are never freed (a
// resource may be reading the one being replaced); the list keeps them reachable for leak checkers.
std::atomic<check_record const*> current_check{nullptr};
std::atomic<check_record const*> every_check{nullptr};

}  // namespace

void set_device_synchronization_check(device_synchronization_check check, void* context) noexcept
{
  if (check == nullptr) {
    current_check.store(nullptr, std::memory_order_release);
    return;
  }
  auto* record = new (std::nothrow) check_record{check, context, every_check.load(std::memory_order_relaxed)};
  if (record == nullptr) {
    std::fputs("rmm: out of host memory to set the device-synchronization check; it stays as it was\n", stderr);
    return;
  }
  while (!every_check.compare_exchange_weak(record->older, record, std::memory_order_acq_rel)) {}
  current_check.store(record, std::memory_order_release);
}

namespace detail {

bool device_synchronization_allowed(cuda_device_id device) noexcept
{
  auto const* record = current_check.load(std::memory_order_acquire);
  return record == nullptr || record->check(record->context, device);
}

}  // namespace detail

}  // namespace rmm::mr
