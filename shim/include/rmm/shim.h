// SPDX-License-Identifier: Apache-2.0
/* The control functions of librmm_shim.so: callable from C, through dlsym(RTLD_DEFAULT, ...) in a
 * program running under the shim, or through Python's ctypes:
 *
 *   import ctypes
 *   shim = ctypes.CDLL(None)                 # the preloaded shim is in the global scope
 *   shim.rmm_shim_release.restype = ctypes.c_size_t
 *   print(shim.rmm_shim_release())          # bytes given back to the device
 *   shim.rmm_shim_print_report(None)        # the report, now, on stderr
 *   shim.rmm_shim_last_message.restype = ctypes.c_char_p
 *   if shim.rmm_shim_pause(0) != 0:         # device memory away, contents in host memory
 *       print(shim.rmm_shim_last_message().decode())
 *   shim.rmm_shim_resume()                  # the same addresses, the same contents
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

/* rmm_shim_pause's flags. */
#define RMM_SHIM_PAUSE_DISCARD 1u /* do not keep the contents: resume maps fresh memory */

/* Pauses the process's device memory, for a program between phases: waits for the device work
 * submitted so far, keeps the contents of every live block in host memory (unless
 * RMM_SHIM_PAUSE_DISCARD), and gives all the device memory under the stacks back while every
 * block keeps its address. Until rmm_shim_resume(), an allocation waits for the resume (up to the
 * `pause_timeout` setting, then it fails with out of memory), a free is applied at the resume, and
 * device work that touches a block is the program's error. Memory the program maps itself
 * (cuMemCreate) and managed memory are not paused. Returns 0, or -1 when the process cannot pause:
 * its blocks are then as they were (free memory may have gone back to the device), unless a device
 * paused before the one that failed cannot be resumed, when the process stays paused and the
 * message says so; rmm_shim_last_message() says what was done or why not. */
int rmm_shim_pause(unsigned int flags);

/* Maps device memory back at the same addresses and restores the contents, then applies the frees
 * made meanwhile and lets waiting allocations go on. Returns 0, or -1 when the devices cannot give
 * the memory back: the process stays paused with its contents in host memory, and a later call
 * can succeed. */
int rmm_shim_resume(void);

/* What the calling thread's last rmm_shim_pause or rmm_shim_resume did, or why it failed. Valid
 * until that thread's next such call. */
const char* rmm_shim_last_message(void);

#ifdef __cplusplus
}
#endif

#endif /* RMM_SHIM_H */
