// SPDX-License-Identifier: Apache-2.0
#pragma once

// How many devices the shim keeps state for. Every per-device table (stacks, contexts, deferred
// frees, report counters) has this many slots; a device beyond them passes by (its calls go to
// the driver), which holds up to CUDA's own limit of visible devices in practice.

namespace rmm::shim {

inline constexpr int max_devices = 64;

/// Whether `device` has a slot in the per-device tables.
[[nodiscard]] constexpr bool has_device_slot(int device) noexcept { return device >= 0 && device < max_devices; }

}  // namespace rmm::shim
