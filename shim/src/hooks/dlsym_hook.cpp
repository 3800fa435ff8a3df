// SPDX-License-Identifier: Apache-2.0
// The dlsym override. CUDA runtimes (static and shared) find the driver with
// dlsym(libcuda, "cuGetProcAddress_v2") and then ask that resolver for everything else, so this is
// how a program that nobody rebuilt reaches the shim. The real lookup always comes first; only an
// exported driver entry point the shim wraps, as the driver itself exports it, is swapped for its
// wrapper. Lookups with RTLD_NEXT never reach this function: dlsym_entry.S jumps straight to the
// real dlsym, so that glibc sees the caller's return address and "next" means next after the
// caller, as without the shim.

#include "serving/dispatch.hpp"
#include "driver/hook_table.hpp"
#include "driver/real_driver.hpp"
#include "settings.hpp"

#include <dlfcn.h>

extern "C" {

/// The real dlsym, for dlsym_entry.S. Set before the program's code runs (see below).
__attribute__((visibility("hidden"))) void* (*rmm_shim_real_dlsym)(void*, char const*) = nullptr;

__attribute__((visibility("hidden"))) RMM_SHIM_BEFORE_SANITIZERS void* rmm_shim_dlsym(void* handle, char const* symbol)
{
  void* found = rmm::shim::real_dlsym(handle, symbol);
  // Cheap exit for the many lookups of a process that have nothing to do with CUDA.
  if (found == nullptr || symbol == nullptr || symbol[0] != 'c' || symbol[1] != 'u') { return found; }
  if (!rmm::shim::settings().enabled) { return found; }
  auto const* entry = rmm::shim::wrapper_for_symbol(symbol);
  if (entry == nullptr && !rmm::shim::may_submit_work(symbol)) { return found; }
  auto const* driver = rmm::shim::real();
  // Only the driver's own entry point: another library exporting the name (or the shim, for a
  // lookup in the global scope) is left alone.
  if (driver == nullptr || rmm::shim::real_dlsym(driver->library, symbol) != found) { return found; }
  if (entry == nullptr || !rmm::shim::wraps(*entry, found)) {
    rmm::shim::note_unwatched_entry_point(symbol, 0, "dlsym");  // may submit work, not wrapped
    return found;
  }
  rmm::shim::note_installed(*entry, rmm::shim::found_through::dlsym);
  return entry->wrapper;
}

/// RTLD_NEXT before the constructor below ran (another library's constructor): resolve first.
/// Only that first lookup sees the shim as its caller.
__attribute__((visibility("hidden"))) RMM_SHIM_BEFORE_SANITIZERS void* rmm_shim_dlsym_next_early(void* handle,
                                                                                                 char const* symbol)
{
  return rmm::shim::real_dlsym(handle, symbol);
}

}  // extern "C"

namespace {

__attribute__((constructor(101))) void find_real_dlsym()
{
  // The jump target must be glibc's own function, not a shim function calling it: only then is the
  // caller's return address the one glibc sees.
  rmm_shim_real_dlsym = rmm::shim::find_glibc_dlsym();
}

}  // namespace
