// SPDX-License-Identifier: Apache-2.0
/* Control API of the rmm CUDA emulator (tests/emulator). Exported by the emulated libcuda.so.1;
 * test code finds it at run time, so the same binary also runs on a real driver:
 *
 *   void* h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);   // loaded once CUDA is initialised
 *   auto version = h ? (rmm_emu_version_fn)dlsym(h, "rmm_emu_version") : nullptr;
 *   if (version == nullptr) { ... a real GPU: skip emulator-only checks ... }
 *
 * rmm_emu_symbol() below does exactly that. Test infrastructure only: nothing ships with it. */
#ifndef RMM_EMU_CONTROL_H
#define RMM_EMU_CONTROL_H

#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kinds of allocation, for the live-allocation queries (bit mask). */
#define RMM_EMU_KIND_DEVICE 1u  /* cudaMalloc / cuMemAlloc */
#define RMM_EMU_KIND_ASYNC 2u   /* cudaMallocAsync / cudaMallocFromPoolAsync (pool blocks) */
#define RMM_EMU_KIND_MANAGED 4u /* cudaMallocManaged */
#define RMM_EMU_KIND_PINNED 8u  /* cudaMallocHost / cudaHostAlloc */
#define RMM_EMU_KIND_VMM 16u    /* cuMemCreate physical allocations not yet freed (unreleased, or still mapped) */
#define RMM_EMU_KIND_ALL 31u

/* "rmm-cuda-emulator <version> (CUDA 13.0 API)". Its presence identifies the emulator. */
const char* rmm_emu_version(void);

/* Sets one knob by its environment-variable name (RMM_EMU_STREAM_DELAY_US, RMM_EMU_FAIL_ALLOC_NTH,
 * RMM_EMU_FAIL_ALLOC_ABOVE, RMM_EMU_PAGEABLE_MEMORY_ACCESS, RMM_EMU_REUSE_STREAM_HANDLES; RMM_EMU_DEVICE_COUNT and
 * RMM_EMU_DEVICE_MEMORY only before cuInit), with the value syntax of the environment. value NULL
 * restores the default. Returns 0, or non-zero with the reason in rmm_emu_last_error(). */
int rmm_emu_set(const char* name, const char* value);

/* Why the calling thread's last rmm_emu_set failed ("" if it did not). */
const char* rmm_emu_last_error(void);

/* Live allocations of `device` (-1: every device) whose kind is in `kinds`, and their requested
 * bytes. Managed and pinned memory count for the device current when it was allocated; VMM
 * allocations for the device in their cuMemCreate properties, once each however often mapped.
 * -1 for a bad device ordinal; 0 before cuInit. */
long long rmm_emu_live_allocations(int device, unsigned kinds);
long long rmm_emu_live_bytes(int device, unsigned kinds);

/* Device memory in use as cudaMemGetInfo sees it: cudaMalloc bytes (rounded to 512), memory
 * reserved by pools and cuMemCreate allocations not yet freed. -1 for a bad ordinal. */
long long rmm_emu_device_used_bytes(int device);

/* Allocation attempts so far (what RMM_EMU_FAIL_ALLOC_NTH counts). */
unsigned long long rmm_emu_allocation_attempts(void);

/* ---- Observing and interleaving stream work, for tests of stream-ordered code ----------------
 * `stream` is a cudaStream_t (CUstream): 0 and cudaStreamLegacy mean the legacy default stream,
 * cudaStreamPerThread the calling thread's per-thread default stream, of the calling thread's
 * current device. */

/* 1 when the stream's next operation waits for work of another stream that has not completed yet
 * (cudaStreamWaitEvent, or the legacy default stream's implicit synchronization); 0 when not
 * (idle, running an operation such as a host function, or ready to run); -1 for an unknown handle
 * or no current context. A stream held up by a host function blocking on another stream is 1. */
int rmm_emu_stream_blocked(void* stream);

/* Host threads blocked right now until stream work completes: in cudaStreamSynchronize,
 * cudaEventSynchronize, cudaDeviceSynchronize, cudaFree, or a synchronous copy or set. Only waits
 * for work not yet done count; stream worker threads (running host functions) never do. */
int rmm_emu_host_waiters(void);

/* Arms a pause: the next cuEventRecord on `stream`, from any thread, enqueues its record and then
 * blocks the calling thread until rmm_emu_resume_event_records(), so a test can act between a
 * record and what its caller does next. One stream is armed at a time (arming again replaces it).
 * 0, or -1 for an unknown handle or no current context. */
int rmm_emu_pause_next_event_record(void* stream);

/* Threads paused in cuEventRecord right now. */
int rmm_emu_paused_event_records(void);

/* Releases every paused thread and disarms the pause. */
void rmm_emu_resume_event_records(void);

typedef const char* (*rmm_emu_version_fn)(void);
typedef int (*rmm_emu_set_fn)(const char*, const char*);
typedef const char* (*rmm_emu_last_error_fn)(void);
typedef long long (*rmm_emu_live_allocations_fn)(int, unsigned);
typedef long long (*rmm_emu_live_bytes_fn)(int, unsigned);
typedef long long (*rmm_emu_device_used_bytes_fn)(int);
typedef unsigned long long (*rmm_emu_allocation_attempts_fn)(void);
typedef int (*rmm_emu_stream_blocked_fn)(void*);
typedef int (*rmm_emu_host_waiters_fn)(void);
typedef int (*rmm_emu_pause_next_event_record_fn)(void*);
typedef int (*rmm_emu_paused_event_records_fn)(void);
typedef void (*rmm_emu_resume_event_records_fn)(void);

/* The control function `name` of an already loaded emulator, or NULL (no emulator loaded). */
static inline void* rmm_emu_symbol(const char* name)
{
  void* lib = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
  return lib != NULL ? dlsym(lib, name) : NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* RMM_EMU_CONTROL_H */
