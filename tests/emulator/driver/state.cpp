// SPDX-License-Identifier: Apache-2.0
#include "state.hpp"

#include "config.hpp"
#include "device.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace rmm_emu {
namespace {

std::atomic<bool> g_ready{false};
std::atomic<bool> g_forked_child{false};

// Never destroyed: detached stream workers and exit-time callers may still use the devices.
std::vector<Device*>& devices()
{
  static auto* d = new std::vector<Device*>;
  return *d;
}

CUresult build_devices()
{
  if (!load_environment().empty()) { return CUDA_ERROR_INVALID_VALUE; }
  freeze_device_settings();
  auto const& s = settings();
  if (s.device_count == 0) { return CUDA_ERROR_NO_DEVICE; }
  // Address space: the capacity plus slack, so fragmentation of the address range never makes an
  // allocation fail that the capacity allows.
  std::uint64_t const reservation = s.device_memory + std::min<std::uint64_t>(s.device_memory, 64 * GiB);
  for (int i = 0; i < s.device_count; ++i) {
    auto* dev = new Device(i, s.device_memory);
    std::string error;
    if (!dev->space.reserve(reservation, error)) {
      std::fprintf(stderr, "rmm CUDA emulator: device %d: %s; cuInit fails with CUDA_ERROR_OUT_OF_MEMORY\n", i,
                   error.c_str());
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    dev->create_default_pool();
    devices().push_back(dev);
  }
  // A child of fork() has none of our stream threads: refuse service there instead of hanging.
  ::pthread_atfork(nullptr, nullptr, [] { g_forked_child.store(true); });
  return CUDA_SUCCESS;
}

}  // namespace

CUresult initialize()
{
  static std::once_flag once;
  static CUresult result = CUDA_ERROR_NOT_INITIALIZED;
  std::call_once(once, [] {
    result = build_devices();
    if (result == CUDA_SUCCESS) { g_ready.store(true); }
  });
  if (g_forked_child.load()) { return CUDA_ERROR_NOT_INITIALIZED; }
  return result;
}

bool ready() { return g_ready.load(std::memory_order_acquire) && !g_forked_child.load(std::memory_order_relaxed); }

int device_count() { return static_cast<int>(devices().size()); }

Device* device(int ordinal)
{
  if (!ready() || ordinal < 0 || ordinal >= device_count()) { return nullptr; }
  return devices()[static_cast<std::size_t>(ordinal)];
}

}  // namespace rmm_emu
