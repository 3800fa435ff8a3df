// SPDX-License-Identifier: Apache-2.0
// One emulated GPU: capacity, address space, primary context and memory pools.
#pragma once

#include "address_space.hpp"
#include "common.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace rmm_emu {

class Context;
class Pool;

class Device {
 public:
  Device(int ordinal, std::uint64_t capacity);
  ~Device();
  Device(Device const&)            = delete;
  Device& operator=(Device const&) = delete;

  int ordinal() const { return ordinal_; }
  std::uint64_t capacity() const { return capacity_; }
  Context& primary() { return *primary_; }
  void create_default_pool();

  // Guarded by memory_mutex().
  std::uint64_t used = 0;  // cudaMalloc bytes plus memory reserved by pools
  AddressSpace space;
  Pool* default_pool         = nullptr;
  Pool* current_pool         = nullptr;
  Pool* default_managed_pool = nullptr;  // cuMemGetDefaultMemPool(..., CU_MEM_ALLOCATION_TYPE_MANAGED)
  std::vector<Pool*> pools;              // owned: the default pool, user pools, destroyed pools still holding memory

 private:
  int ordinal_;
  std::uint64_t capacity_;
  std::unique_ptr<Context> primary_;
};

// cuDeviceGetAttribute for this device (H200-like values).
CUresult device_attribute(int* value, CUdevice_attribute attrib, Device const& dev);

// "RMM CUDA emulator"
inline constexpr char kDeviceName[] = "RMM CUDA emulator";

}  // namespace rmm_emu
