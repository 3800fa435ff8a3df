// SPDX-License-Identifier: Apache-2.0
/* The control functions of librmm_shim.so: callable from C, through dlsym(RTLD_DEFAULT, ...) in a
 * program running under the shim, or through Python's ctypes:
 *
 *   import ctypes
 *   shim = ctypes.CDLL(None)                 # the preloaded shim is in the global scope
 *   shim.rmm_shim_release.restype = ctypes.c_size_t
 *   print(shim.rmm_shim_release())          # bytes given back to the device
 *   shim.rmm_shim_print_report(None)        # the report, now, on stderr
 */
#ifndef RMM_SHIM_H
#define RMM_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the shim serves allocations, 0 when it passes every call through (the kill switch). */
int rmm_shim_enabled(void);

/* Writes the report now: as text to stderr when `path` is NULL, else as JSON to the file `path`.
 * Calls no CUDA. Returns 0, or -1 when the file cannot be written. */
int rmm_shim_print_report(const char* path);

/* Gives memory back to the devices: waits for every pending free to become reusable, then returns
 * every sub-allocator's free memory. Synchronizes each device the shim has a stack on. Returns the
 * number of bytes given back. */
size_t rmm_shim_release(void);

#ifdef __cplusplus
}
#endif

#endif /* RMM_SHIM_H */
