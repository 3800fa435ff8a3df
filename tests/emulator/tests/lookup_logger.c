/* SPDX-License-Identifier: Apache-2.0 */
/* LD_PRELOAD library for the emulator tests: overrides dlsym the way the project's shim will, wraps
 * the driver's resolver (including when the runtime asks it for itself) and appends every lookup
 * to the file named by EMU_LOOKUP_LOG:
 *   dlsym <name> <found 0|1>
 *   getproc <name> <version> <flags> <result> <function pointer>                                  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*resolver_fn)(const char*, void**, int, uint64_t, int*);
typedef void* (*dlsym_fn)(void*, const char*);

/* Our own comparisons: a sanitizer runtime resolves its interceptors through this dlsym before it is
 * initialised, and its strcmp/strncmp interceptors cannot run yet. */
static int starts_with(const char* s, const char* prefix)
{
  while (*prefix != '\0') {
    if (*s++ != *prefix++) { return 0; }
  }
  return 1;
}
static int same(const char* a, const char* b)
{
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

static resolver_fn g_resolver;
static dlsym_fn g_dlsym;
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_line(const char* format, const char* name, long a, unsigned long b, int c, void* p)
{
  const char* path = getenv("EMU_LOOKUP_LOG");
  if (path == NULL) { return; }
  pthread_mutex_lock(&g_log_lock);
  FILE* f = fopen(path, "a");
  if (f != NULL) {
    fprintf(f, format, name, a, b, c, p);
    fclose(f);
  }
  pthread_mutex_unlock(&g_log_lock);
}

static int wrapped_resolver(const char* symbol, void** pfn, int version, uint64_t flags, int* status)
{
  int rc = g_resolver(symbol, pfn, version, flags, status);
  log_line("getproc %s %ld %lu %d %p\n", symbol, version, (unsigned long)flags, rc, rc == 0 ? *pfn : NULL);
  if (rc == 0 && same(symbol, "cuGetProcAddress") && version >= 12000) {
    g_resolver = (resolver_fn)*pfn;  /* keep wrapping the resolver the runtime goes on with */
    *pfn = (void*)wrapped_resolver;
  }
  return rc;
}

/* Sibling calls: forwarding RTLD_NEXT with a tail jump lets the real dlsym see *our caller's* return
 * address, so "next" is counted from the caller, as without this library (sanitizer runtimes resolve
 * their interceptors that way while they start). */
__attribute__((optimize("optimize-sibling-calls"))) void* dlsym(void* handle, const char* name)
{
  if (g_dlsym == NULL) {
    g_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (g_dlsym == NULL) { g_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"); }
  }
  if (handle == RTLD_NEXT) { return g_dlsym(handle, name); }
  void* found = g_dlsym(handle, name);
  if (starts_with(name, "cu")) { log_line("dlsym %s %ld %lu %d %p\n", name, found != NULL, 0, 0, found); }
  if (found != NULL && same(name, "cuGetProcAddress_v2")) {
    g_resolver = (resolver_fn)found;
    return (void*)wrapped_resolver;
  }
  return found;
}
