// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the emulator's own tests. The test programs link NVIDIA's libcudart and reach
// the emulator only through LD_LIBRARY_PATH, as the project's tests do.
#pragma once

#include <rmm_emu/control.h>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#define EXPECT_CUDA(expr) EXPECT_EQ(cudaSuccess, (expr))
#define ASSERT_CUDA(expr) ASSERT_EQ(cudaSuccess, (expr))

namespace emu {

// The control API of the loaded emulator (the runtime is initialised first, which loads it).
struct Control {
  rmm_emu_version_fn version;
  rmm_emu_set_fn set;
  rmm_emu_last_error_fn last_error;
  rmm_emu_live_allocations_fn live_allocations;
  rmm_emu_live_bytes_fn live_bytes;
  rmm_emu_device_used_bytes_fn device_used_bytes;
  rmm_emu_allocation_attempts_fn allocation_attempts;
  rmm_emu_stream_blocked_fn stream_blocked;
  rmm_emu_host_waiters_fn host_waiters;
  rmm_emu_pause_next_event_record_fn pause_next_event_record;
  rmm_emu_paused_event_records_fn paused_event_records;
  rmm_emu_resume_event_records_fn resume_event_records;
};
Control const& control();

// Sets a knob for the lifetime of the object (restores the default afterwards).
class Knob {
 public:
  Knob(char const* name, char const* value);
  ~Knob();
  Knob(Knob const&)            = delete;
  Knob& operator=(Knob const&) = delete;

 private:
  char const* name_;
};

// A driver entry point, through the runtime (cudaGetDriverEntryPointByVersion), as a typed pointer.
template <class F>
F driver_entry(char const* symbol, unsigned version, unsigned long long flags = cudaEnableDefault)
{
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, version, flags, &status) != cudaSuccess) { return nullptr; }
  return reinterpret_cast<F>(fn);
}

// A helper program run in its own process with extra environment entries ("NAME=value"). The
// caller's RMM_EMU_* variables and LD_PRELOAD are not inherited.
struct ChildResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
  double seconds = 0;
};
ChildResult run_child(std::vector<std::string> const& args, std::vector<std::string> const& env = {});

// Paths baked in by CMake.
std::string child_path();
std::string build_path(char const* name);

// Sleeps in a host function: the stream stays busy this long.
void sleep_ms(int ms);

}  // namespace emu
