// SPDX-License-Identifier: Apache-2.0
// Emulator settings: the RMM_EMU_* environment variables and their run-time twins (rmm_emu_set).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rmm_emu {

inline constexpr std::uint64_t kOff = UINT64_MAX;  // "no limit" / "disabled" for the size knobs

struct Settings {
  // Fixed once cuInit has run: they shape the devices.
  int device_count            = 2;
  std::uint64_t device_memory = std::uint64_t{16} << 30;
  // Live knobs, read on every operation.
  std::atomic<std::uint64_t> stream_delay_us{0};
  std::atomic<int> pageable_memory_access{0};
  std::atomic<int> reuse_stream_handles{0};       // cuStreamCreate recycles destroyed streams' handles
  std::atomic<int> sticky_faults{0};              // work reaching unmapped VMM memory faults its context
  std::atomic<std::uint64_t> fail_above{kOff};    // fail allocations larger than this
  std::atomic<std::uint64_t> fail_nth_target{0};  // fail the allocation attempt with this index (1-based)
  std::atomic<std::uint64_t> alloc_attempts{0};   // allocation attempts so far
};

Settings& settings();

// Parses the environment once (later calls return the cached result). Returns an empty string,
// or the explanation that was printed to stderr; cuInit fails when it is not empty.
const std::string& load_environment();

// Makes RMM_EMU_DEVICE_COUNT / RMM_EMU_DEVICE_MEMORY read-only (called by cuInit).
void freeze_device_settings();

// Body of rmm_emu_set: empty string on success, else why not. value == nullptr restores the default.
std::string set_setting(const char* name, const char* value);

// Fault injection: counts one allocation attempt of `bytes` and says whether it must fail.
bool inject_allocation_failure(std::uint64_t bytes);

// "4096", "64KiB", "16GiB", "1TiB" (suffix case-insensitive; B allowed). Nothing else.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace rmm_emu
