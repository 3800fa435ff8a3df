// SPDX-License-Identifier: Apache-2.0
// Helper program for the emulator tests: scenarios that need a process of their own (environment
// read at initialisation, exit behaviour, lookups seen by an LD_PRELOAD library, fork).
// Usage: emulator_child <mode> [args]; prints results on stdout, one "key value" per line.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

char const* name(cudaError_t e) { return cudaGetErrorName(e); }

int devices()
{
  int count           = 0;
  cudaError_t const e = cudaGetDeviceCount(&count);
  std::printf("status %s\ncount %d\n", name(e), count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, d);
    cudaSetDevice(d);
    std::size_t free  = 0;
    std::size_t total = 0;
    cudaMemGetInfo(&free, &total);
    std::printf("device %d total %zu free %zu memgetinfo_total %zu\n", d, prop.totalGlobalMem, free, total);
  }
  return 0;
}

int allocs(int n)
{
  for (int i = 0; i < n; ++i) {
    void* p             = nullptr;
    cudaError_t const e = cudaMalloc(&p, 1024);
    std::printf("alloc %d %s\n", i + 1, name(e));
  }
  return 0;
}

// A static object whose destructor runs after the runtime's exit handler.
struct AtExit {
  void* ptr           = nullptr;
  cudaStream_t stream = nullptr;
  ~AtExit()
  {
    if (ptr == nullptr) { return; }
    std::printf("exit cudaFree %s\n", name(cudaFree(ptr)));
    std::printf("exit cudaStreamDestroy %s\n", name(cudaStreamDestroy(stream)));
    int dev = -1;
    std::printf("exit cudaGetDevice %s\n", name(cudaGetDevice(&dev)));
    std::printf("exit cudaMalloc %s\n", name(cudaMalloc(&ptr, 16)));
    std::fflush(stdout);
  }
};
AtExit g_at_exit;

int exit_probe()
{
  cudaMalloc(&g_at_exit.ptr, 4096);
  cudaStreamCreate(&g_at_exit.stream);
  std::printf("main returns\n");
  std::fflush(stdout);
  return 0;
}

// A static object whose destructor calls the driver directly (as a library that reaches CUDA
// through the driver does) after main returned: the driver keeps answering.
struct DriverAtExit {
  CUdeviceptr ptr = 0;
  ~DriverAtExit()
  {
    if (ptr == 0) { return; }
    void* lib              = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    auto get_current       = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(lib, "cuCtxGetCurrent"));
    auto set_current       = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(lib, "cuCtxSetCurrent"));
    auto get_device        = reinterpret_cast<CUresult (*)(CUdevice*)>(dlsym(lib, "cuCtxGetDevice"));
    auto mem_free          = reinterpret_cast<CUresult (*)(CUdeviceptr)>(dlsym(lib, "cuMemFree_v2"));
    CUcontext ctx          = nullptr;
    CUresult const current = get_current(&ctx);
    std::printf("exit cuCtxGetCurrent %d %s\n", static_cast<int>(current), ctx != nullptr ? "context" : "none");
    std::printf("exit cuCtxSetCurrent %d\n", static_cast<int>(set_current(ctx)));
    CUdevice dev          = -1;
    CUresult const device = get_device(&dev);
    std::printf("exit cuCtxGetDevice %d device %d\n", static_cast<int>(device), static_cast<int>(dev));
    std::printf("exit cuMemFree %d\n", static_cast<int>(mem_free(ptr)));
    std::fflush(stdout);
  }
};
DriverAtExit g_driver_at_exit;

int exit_driver_probe()
{
  void* p = nullptr;
  cudaSetDevice(1);
  cudaMalloc(&p, 4096);
  g_driver_at_exit.ptr = reinterpret_cast<CUdeviceptr>(p);
  std::printf("main returns\n");
  std::fflush(stdout);
  return 0;
}

// Work still queued at exit must not hold the process up.
int exit_busy()
{
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  cudaLaunchHostFunc(
    s, [](void*) { std::this_thread::sleep_for(std::chrono::seconds(20)); }, nullptr);
  void* p = nullptr;
  cudaMallocAsync(&p, 1 << 20, s);
  cudaFreeAsync(p, s);
  std::printf("main returns\n");
  std::fflush(stdout);
  return 0;
}

// Allocations through every path the shim will hook.
int lookup()
{
  void* p       = nullptr;
  cudaError_t e = cudaMalloc(&p, 1 << 20);
  if (e == cudaSuccess) { e = cudaFree(p); }
  cudaStream_t s = nullptr;
  if (e == cudaSuccess) { e = cudaStreamCreate(&s); }
  if (e == cudaSuccess) { e = cudaMallocAsync(&p, 1 << 20, s); }
  if (e == cudaSuccess) { e = cudaFreeAsync(p, s); }
  if (e == cudaSuccess) { e = cudaStreamSynchronize(s); }
  std::printf("lookup %s\n", name(e));
  return e == cudaSuccess ? 0 : 1;
}

template <class F>
F driver_symbol(void* lib, char const* sym)
{
  return reinterpret_cast<F>(dlsym(lib, sym));
}

// The driver before cuInit: only the version, the error strings and the resolver work.
int preinit()
{
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) {
    std::printf("dlopen failed\n");
    return 1;
  }
  int count   = -1;
  int version = 0;
  void* fn    = nullptr;
  std::printf("cuDeviceGetCount %d\n", driver_symbol<CUresult (*)(int*)>(lib, "cuDeviceGetCount")(&count));
  CUresult const rv = driver_symbol<CUresult (*)(int*)>(lib, "cuDriverGetVersion")(&version);
  std::printf("cuDriverGetVersion %d %d\n", rv, version);
  auto* resolver = driver_symbol<CUresult (*)(char const*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*)>(
    lib, "cuGetProcAddress_v2");
  std::printf("cuGetProcAddress %d\n", resolver("cuMemAlloc", &fn, 3020, 0, nullptr));
  CUdeviceptr p = 0;
  std::printf("cuMemAlloc %d\n", driver_symbol<CUresult (*)(CUdeviceptr*, size_t)>(lib, "cuMemAlloc_v2")(&p, 16));
  std::printf("cuInit %d\n", driver_symbol<CUresult (*)(unsigned)>(lib, "cuInit")(0));
  CUresult const rc = driver_symbol<CUresult (*)(int*)>(lib, "cuDeviceGetCount")(&count);
  std::printf("cuDeviceGetCount %d %d\n", rc, count);
  // No context is current yet: context-bound calls say so.
  std::printf("cuMemAlloc %d\n", driver_symbol<CUresult (*)(CUdeviceptr*, size_t)>(lib, "cuMemAlloc_v2")(&p, 16));
  return 0;
}

// fork() after initialisation: the child cannot use CUDA (as on real CUDA), and does not hang.
int fork_child()
{
  void* p = nullptr;
  cudaMalloc(&p, 1024);
  pid_t const pid = fork();
  if (pid == 0) {
    void* q = nullptr;
    std::printf("child cudaMalloc %s\n", name(cudaMalloc(&q, 1024)));
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("parent cudaFree %s\n", name(cudaFree(p)));
  return 0;
}

template <class F>
F vmm_entry(char const* symbol)
{
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &status);
  return reinterpret_cast<F>(fn);
}

// cuMemUnmap while a memset of the range is still queued: the memset must not touch the range
// afterwards. A GPU reports an illegal address; the emulator says why and aborts.
int vmm_unmap_under_work()
{
  auto reserve =
    vmm_entry<CUresult (*)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long)>("cuMemAddressReserve");
  auto create =
    vmm_entry<CUresult (*)(CUmemGenericAllocationHandle*, size_t, CUmemAllocationProp const*, unsigned long long)>(
      "cuMemCreate");
  auto map =
    vmm_entry<CUresult (*)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long)>("cuMemMap");
  auto set_access = vmm_entry<CUresult (*)(CUdeviceptr, size_t, CUmemAccessDesc const*, size_t)>("cuMemSetAccess");
  auto unmap      = vmm_entry<CUresult (*)(CUdeviceptr, size_t)>("cuMemUnmap");
  if (reserve == nullptr || create == nullptr || map == nullptr || set_access == nullptr || unmap == nullptr) {
    std::printf("missing entry points\n");
    return 1;
  }
  std::size_t const size = 2 << 20;
  CUmemAllocationProp prop{};
  prop.type          = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id   = 0;
  CUmemAccessDesc access{};
  access.location                     = prop.location;
  access.flags                        = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUdeviceptr va                      = 0;
  CUmemGenericAllocationHandle handle = 0;
  std::printf("reserve %d\n", reserve(&va, size, 0, 0, 0));
  std::printf("create %d\n", create(&handle, size, &prop, 0));
  std::printf("map %d\n", map(va, size, 0, handle, 0));
  std::printf("access %d\n", set_access(va, size, &access, 1));
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  cudaLaunchHostFunc(
    s, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }, nullptr);
  std::printf("memset %s\n", name(cudaMemsetAsync(reinterpret_cast<void*>(va), 1, size, s)));
  std::printf("unmap %d\n", unmap(va, size));
  std::fflush(stdout);
  cudaStreamSynchronize(s);
  std::printf("not reached\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv)
{
  std::string const mode = argc > 1 ? argv[1] : "";
  if (mode == "devices") { return devices(); }
  if (mode == "allocs") { return allocs(argc > 2 ? std::atoi(argv[2]) : 1); }
  if (mode == "exit") { return exit_probe(); }
  if (mode == "exit-busy") { return exit_busy(); }
  if (mode == "exit-driver") { return exit_driver_probe(); }
  if (mode == "lookup") { return lookup(); }
  if (mode == "preinit") { return preinit(); }
  if (mode == "fork") { return fork_child(); }
  if (mode == "vmm-unmap-under-work") { return vmm_unmap_under_work(); }
  std::fprintf(stderr, "emulator_child: unknown mode '%s'\n", mode.c_str());
  return 2;
}
