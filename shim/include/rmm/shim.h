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

/* rmm_shim_pause's flags; without either, each tag's region says (rmm_shim_region_begin) and
 * untagged memory is kept. */
#define RMM_SHIM_PAUSE_DISCARD 1u /* do not keep the contents: resume maps fresh memory */
#define RMM_SHIM_PAUSE_KEEP 2u    /* keep every tag's contents, whatever its region said */

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

/* What the calling thread's last control call (pause, resume, region) did, or why it failed. Valid
 * until that thread's next such call. */
const char* rmm_shim_last_message(void);

/* rmm_shim_region_begin's flags. */
#define RMM_SHIM_REGION_DISCARD 1u     /* a pause drops this tag's contents unless it says otherwise */
#define RMM_SHIM_REGION_ALL_THREADS 2u /* the region covers every thread that is in no region of its own */

/* Begins a region: the device memory the calling thread allocates until rmm_shim_region_end()
 * belongs to `tag` (1 to 63 letters, digits, '_', '-', '.', ':' or '/'), and can be paused and
 * resumed on its own (rmm_shim_pause_tag). Regions nest; the innermost one tags. With
 * RMM_SHIM_REGION_ALL_THREADS it covers every thread that is in no region of its own, for
 * frameworks that allocate on threads of their own; one such region at a time. A tag keeps its
 * memory after its region ends, and a later region may name it again (its DISCARD flag then holds).
 * Up to 15 tags. Returns 0, or -1 (rmm_shim_last_message says why). */
int rmm_shim_region_begin(const char* tag, unsigned int flags);

/* Ends the calling thread's innermost region, else the region covering every thread. Returns 0,
 * or -1 when there is none. */
int rmm_shim_region_end(void);

/* The tag the calling thread allocates under now, or NULL when untagged. Valid for the life of the
 * process. */
const char* rmm_shim_region_current(void);

/* Pauses the memory of one tag as rmm_shim_pause does the process's (NULL: the whole process):
 * untagged memory and other tags run on. Until rmm_shim_resume_tag, the tag's allocations wait for
 * its resume and its frees are held. Flags as rmm_shim_pause. Returns 0, or -1
 * (rmm_shim_last_message says why: a tag no region named, a tag paused already, ...). */
int rmm_shim_pause_tag(const char* tag, unsigned int flags);

/* Resumes a tag paused on its own (NULL: as rmm_shim_resume). Returns 0, or -1. */
int rmm_shim_resume_tag(const char* tag);

#ifdef __cplusplus
}
#endif

#endif /* RMM_SHIM_H */
