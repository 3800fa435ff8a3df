// SPDX-License-Identifier: Apache-2.0
// The emulator's control API (include/rmm_emu/control.h).
#include "../include/rmm_emu/control.h"

#include "common.hpp"
#include "config.hpp"
#include "device.hpp"
#include "event.hpp"
#include "memory.hpp"
#include "state.hpp"
#include "stream.hpp"

#include <mutex>
#include <string>

using namespace rmm_emu;

namespace {
thread_local std::string t_last_error;
}

RMM_EMU_EXPORT const char* rmm_emu_version(void) { return "rmm-cuda-emulator 1.0 (CUDA 13.0 API)"; }

RMM_EMU_EXPORT int rmm_emu_set(const char* name, const char* value)
{
  t_last_error = set_setting(name, value);
  return t_last_error.empty() ? 0 : 1;
}

RMM_EMU_EXPORT const char* rmm_emu_last_error(void) { return t_last_error.c_str(); }

RMM_EMU_EXPORT long long rmm_emu_live_allocations(int dev, unsigned kinds)
{
  if (!ready()) { return 0; }
  if (dev != -1 && device(dev) == nullptr) { return -1; }
  return live_stats(dev, kinds).count;
}

RMM_EMU_EXPORT long long rmm_emu_live_bytes(int dev, unsigned kinds)
{
  if (!ready()) { return 0; }
  if (dev != -1 && device(dev) == nullptr) { return -1; }
  return live_stats(dev, kinds).bytes;
}

RMM_EMU_EXPORT long long rmm_emu_device_used_bytes(int dev)
{
  Device* d = device(dev);
  if (d == nullptr) { return -1; }
  std::lock_guard lock(memory_mutex());
  return static_cast<long long>(d->used);
}

RMM_EMU_EXPORT unsigned long long rmm_emu_allocation_attempts(void) { return settings().alloc_attempts.load(); }

RMM_EMU_EXPORT int rmm_emu_stream_blocked(void* stream)
{
  if (!ready()) { return -1; }
  std::shared_ptr<Stream> s;
  if (resolve_stream(static_cast<CUstream>(stream), false, s) != CUDA_SUCCESS) { return -1; }
  return s->blocked_on_dependency() ? 1 : 0;
}

RMM_EMU_EXPORT int rmm_emu_host_waiters(void) { return host_waiters(); }

RMM_EMU_EXPORT int rmm_emu_pause_next_event_record(void* stream)
{
  if (!ready()) { return -1; }
  std::shared_ptr<Stream> s;
  if (resolve_stream(static_cast<CUstream>(stream), false, s) != CUDA_SUCCESS) { return -1; }
  arm_event_record_pause(std::move(s));
  return 0;
}

RMM_EMU_EXPORT int rmm_emu_paused_event_records(void) { return paused_event_records(); }

RMM_EMU_EXPORT void rmm_emu_resume_event_records(void) { resume_event_records(); }
