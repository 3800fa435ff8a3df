// SPDX-License-Identifier: Apache-2.0
#include "backend.hpp"

#include <rmm/cuda_device.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>

namespace rmm::test {

namespace {

void* emulator_symbol(char const* name)
{
  void* driver = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
  if (driver == nullptr) { return nullptr; }
  void* symbol = dlsym(driver, name);
  dlclose(driver);  // drops only the reference taken by RTLD_NOLOAD
  return symbol;
}

}  // namespace

backend current_backend()
{
  (void)device_count();  // loads the driver
  return emulator_symbol("rmm_emu_version") != nullptr ? backend::emulator : backend::cuda;
}

char const* to_string(backend b) { return b == backend::emulator ? "emulator" : "cuda"; }

int device_count()
{
  static int const count = rmm::get_num_cuda_devices();
  return count;
}

void emulator_set(std::string const& name, std::string const& value)
{
  using set_fn   = int (*)(char const*, char const*);
  using error_fn = char const* (*)();
  auto set       = reinterpret_cast<set_fn>(emulator_symbol("rmm_emu_set"));
  ASSERT_NE(set, nullptr) << "emulator_set(" << name << ") needs the emulator backend";
  if (set(name.c_str(), value.c_str()) != 0) {
    auto last_error = reinterpret_cast<error_fn>(emulator_symbol("rmm_emu_last_error"));
    FAIL() << "emulator rejected " << name << "=" << value << ": "
           << (last_error != nullptr ? last_error() : "(no message)");
  }
}

}  // namespace rmm::test
