// SPDX-License-Identifier: Apache-2.0
// cuDevicePrimaryCtxReset: what cudaDeviceReset does to a device.
#pragma once

namespace rmm_emu {

class Device;

// Waits for the device's streams, then destroys its user streams, frees its device, pool and
// managed allocations, destroys its user pools and resets the default pool and context state.
void reset_device(Device& dev);

}  // namespace rmm_emu
