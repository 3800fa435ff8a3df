// SPDX-License-Identifier: Apache-2.0
// LD_PRELOAD helper: logs every entry point the CUDA runtime asks the driver for through
// cuGetProcAddress, with version and flags, so the emulator can reproduce the real lookup order.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int (*getproc_fn)(const char*, void**, int, uint64_t, int*);
static getproc_fn real_getproc;
static void* (*real_dlsym)(void*, const char*);

static int logging_getproc(const char* sym, void** pfn, int ver, uint64_t flags, int* status)
{
  int rc = real_getproc(sym, pfn, ver, flags, status);
  fprintf(stderr, "getproc %s %d %lu -> %d status %d\n", sym, ver, (unsigned long)flags, rc, status ? *status : -1);
  if (rc == 0 && strcmp(sym, "cuGetProcAddress") == 0) {
    real_getproc = (getproc_fn)*pfn;  // cudart asks for the resolver itself; keep wrapping it
    *pfn = (void*)logging_getproc;
  }
  return rc;
}

void* dlsym(void* handle, const char* name)
{
  if (!real_dlsym) {
    real_dlsym = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!real_dlsym) real_dlsym = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  }
  void* r = real_dlsym(handle, name);
  fprintf(stderr, "dlsym %s -> %p\n", name, r);
  if (r && strcmp(name, "cuGetProcAddress_v2") == 0) {
    real_getproc = (getproc_fn)r;
    return (void*)logging_getproc;
  }
  return r;
}
