// SPDX-License-Identifier: Apache-2.0
#pragma once

// Which CUDA the test process runs on, and the emulator's controls.

#include <string>

namespace rmm::test {

enum class backend { emulator, cuda };

/// Decided by what the process loaded as libcuda.so.1: the emulator exports rmm_emu_version.
[[nodiscard]] backend current_backend();
[[nodiscard]] char const* to_string(backend b);

/// Number of visible devices (cached).
[[nodiscard]] int device_count();

/// Sets an emulator knob (same names as the RMM_EMU_* environment variables). Fails the calling
/// test when not on the emulator or when the emulator rejects the value.
void emulator_set(std::string const& name, std::string const& value);

}  // namespace rmm::test
