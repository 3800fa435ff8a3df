// SPDX-License-Identifier: Apache-2.0
// Prints how the CUDA runtime behaves at the edges the emulator must reproduce.
// Build against the real toolkit; run on a GPU host and on the emulator, then diff the outputs.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void report(char const* what, cudaError_t err)
{
  std::printf("%-58s -> %s\n", what, cudaGetErrorName(err));
  (void)cudaGetLastError();  // never let one probe's sticky state leak into the next
}

struct exit_probe {
  void* ptr{};
  cudaStream_t stream{};
  ~exit_probe()
  {
    if (ptr == nullptr) { return; }
    std::printf("%-58s -> %s\n", "cudaFree in a static destructor at exit", cudaGetErrorName(cudaFree(ptr)));
    std::printf("%-58s -> %s\n", "cudaStreamDestroy at exit", cudaGetErrorName(cudaStreamDestroy(stream)));
    int dev = -1;
    std::printf("%-58s -> %s\n", "cudaGetDevice at exit", cudaGetErrorName(cudaGetDevice(&dev)));
    std::fflush(stdout);
  }
};
exit_probe at_exit;

}  // namespace

int main()
{
  int count = 0;
  report("cudaGetDeviceCount", cudaGetDeviceCount(&count));
  std::printf("devices: %d\n", count);
  if (count == 0) { return 1; }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("driver %d runtime %d\n", driver, runtime);

  void* p = reinterpret_cast<void*>(0x1);
  report("cudaMalloc(0)", cudaMalloc(&p, 0));
  std::printf("  pointer from cudaMalloc(0): %p\n", p);
  p = reinterpret_cast<void*>(0x1);
  report("cudaMallocManaged(0)", cudaMallocManaged(&p, 0));
  std::printf("  pointer: %p\n", p);
  p = reinterpret_cast<void*>(0x1);
  report("cudaMallocHost(0)", cudaMallocHost(&p, 0));
  std::printf("  pointer: %p\n", p);
  p = reinterpret_cast<void*>(0x1);
  report("cudaMallocAsync(0, stream 0)", cudaMallocAsync(&p, 0, nullptr));
  std::printf("  pointer: %p\n", p);
  report("cudaFree(nullptr)", cudaFree(nullptr));
  report("cudaFreeHost(nullptr)", cudaFreeHost(nullptr));
  report("cudaFreeAsync(nullptr, 0)", cudaFreeAsync(nullptr, nullptr));

  p = nullptr;
  report("cudaMalloc(1 PiB)", cudaMalloc(&p, std::size_t{1} << 50));
  std::printf("  pointer after failure: %p\n", p);
  report("cudaGetLastError after failed cudaMalloc (fresh)", cudaSuccess);
  {
    void* q = nullptr;
    cudaMalloc(&q, std::size_t{1} << 50);
    std::printf("%-58s -> %s\n", "cudaPeekAtLastError after failed cudaMalloc",
                cudaGetErrorName(cudaPeekAtLastError()));
    std::printf("%-58s -> %s\n", "cudaGetLastError after failed cudaMalloc", cudaGetErrorName(cudaGetLastError()));
    std::printf("%-58s -> %s\n", "cudaGetLastError again", cudaGetErrorName(cudaGetLastError()));
  }
  report("cudaMallocAsync(1 PiB)", cudaMallocAsync(&p, std::size_t{1} << 50, nullptr));
  report("cudaMallocManaged(1 PiB)", cudaMallocManaged(&p, std::size_t{1} << 50));
  report("cudaMallocHost(1 PiB)", cudaMallocHost(&p, std::size_t{1} << 50));

  // Alignment and spacing of small allocations.
  void* a[4]{};
  for (auto& x : a) { cudaMalloc(&x, 1); }
  std::printf("small cudaMalloc pointers: %p %p %p %p\n", a[0], a[1], a[2], a[3]);
  for (auto x : a) { cudaFree(x); }

  void* d = nullptr;
  cudaMalloc(&d, 1 << 20);
  report("cudaFree(interior pointer)", cudaFree(static_cast<char*>(d) + 256));
  int host_int = 0;
  report("cudaFree(host stack pointer)", cudaFree(&host_int));
  report("cudaFree(0x1234)", cudaFree(reinterpret_cast<void*>(0x1234)));
  report("cudaFreeAsync(host stack pointer)", cudaFreeAsync(&host_int, nullptr));
  report("cudaStreamSynchronize after bad cudaFreeAsync", cudaStreamSynchronize(nullptr));
  report("cudaFreeHost(device pointer)", cudaFreeHost(d));

  cudaPointerAttributes attr{};
  report("cudaPointerGetAttributes(interior device ptr)",
         cudaPointerGetAttributes(&attr, static_cast<char*>(d) + 4096));
  std::printf("  type %d device %d devicePointer-ptr %td\n", attr.type, attr.device,
              static_cast<char*>(attr.devicePointer) - static_cast<char*>(d));
  report("cudaPointerGetAttributes(one past end)", cudaPointerGetAttributes(&attr, static_cast<char*>(d) + (1 << 20)));
  std::printf("  type %d device %d\n", attr.type, attr.device);
  report("cudaPointerGetAttributes(host stack)", cudaPointerGetAttributes(&attr, &host_int));
  std::printf("  type %d device %d hostPointer %p\n", attr.type, attr.device, attr.hostPointer);
  report("cudaPointerGetAttributes(nullptr)", cudaPointerGetAttributes(&attr, nullptr));
  std::printf("  type %d\n", attr.type);
  void* m = nullptr;
  cudaMallocManaged(&m, 4096);
  report("cudaPointerGetAttributes(managed)", cudaPointerGetAttributes(&attr, m));
  std::printf("  type %d device %d\n", attr.type, attr.device);
  void* h = nullptr;
  cudaMallocHost(&h, 4096);
  report("cudaPointerGetAttributes(pinned host)", cudaPointerGetAttributes(&attr, h));
  std::printf("  type %d device %d dev==host %d\n", attr.type, attr.device, attr.devicePointer == attr.hostPointer);
  report("cudaFree(pinned host ptr)", cudaFree(h));
  report("cudaFreeHost(pinned host ptr)", cudaFreeHost(h));
  cudaFree(m);
  cudaFree(d);

  std::size_t free_b = 0, total_b = 0;
  report("cudaMemGetInfo", cudaMemGetInfo(&free_b, &total_b));
  std::printf("  free %zu total %zu\n", free_b, total_b);
  int v = 0;
  cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, 0);
  std::printf("attr MemoryPoolsSupported %d\n", v);
  cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolSupportedHandleTypes, 0);
  std::printf("attr MemoryPoolSupportedHandleTypes %d\n", v);
  cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccess, 0);
  std::printf("attr PageableMemoryAccess %d\n", v);
  cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, 0);
  std::printf("attr ConcurrentManagedAccess %d\n", v);
  cudaDeviceGetAttribute(&v, cudaDevAttrManagedMemory, 0);
  std::printf("attr ManagedMemory %d\n", v);
  cudaDeviceGetAttribute(&v, cudaDevAttrIntegrated, 0);
  std::printf("attr Integrated %d\n", v);
  cudaDeviceGetAttribute(&v, cudaDevAttrHostRegisterSupported, 0);
  std::printf("attr HostRegisterSupported %d\n", v);
  report("cudaDeviceGetAttribute(bad device 99)", cudaDeviceGetAttribute(&v, cudaDevAttrManagedMemory, 99));
  report("cudaSetDevice(99)", cudaSetDevice(99));
  report("cudaSetDevice(-1)", cudaSetDevice(-1));

  // Memory pools: granularity and attributes.
  cudaMemPool_t pool{};
  cudaMemPoolProps props{};
  props.allocType     = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id   = 0;
  report("cudaMemPoolCreate(no handles)", cudaMemPoolCreate(&pool, &props));
  void* ap = nullptr;
  report("cudaMallocFromPoolAsync(1 byte)", cudaMallocFromPoolAsync(&ap, 1, pool, nullptr));
  std::uint64_t reserved = 0, used = 0, threshold = 0;
  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  std::printf("  after 1 byte: reserved %lu used %lu threshold %lu\n", (unsigned long)reserved, (unsigned long)used,
              (unsigned long)threshold);
  void* ap2 = nullptr;
  cudaMallocFromPoolAsync(&ap2, 1, pool, nullptr);
  std::printf("  two 1-byte pool pointers differ by %td\n", static_cast<char*>(ap2) - static_cast<char*>(ap));
  report("cudaFreeAsync(pool ptr)", cudaFreeAsync(ap, nullptr));
  cudaFreeAsync(ap2, nullptr);
  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
  std::printf("  after free (not synced): reserved %lu used %lu\n", (unsigned long)reserved, (unsigned long)used);
  cudaStreamSynchronize(nullptr);
  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
  std::printf("  after sync: reserved %lu\n", (unsigned long)reserved);
  cudaMallocFromPoolAsync(&ap, 64 << 20, pool, nullptr);
  cudaFreeAsync(ap, nullptr);
  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
  std::printf("  64 MiB alloc+free, before sync: reserved %lu\n", (unsigned long)reserved);
  cudaStreamSynchronize(nullptr);
  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
  std::printf("  64 MiB alloc+free, after sync: reserved %lu\n", (unsigned long)reserved);
  report("cudaMemPoolTrimTo(0)", cudaMemPoolTrimTo(pool, 0));
  report("cudaFree(pool ptr) [sync free of async memory]", cudaSuccess);
  cudaMallocFromPoolAsync(&ap, 4096, pool, nullptr);
  std::printf("%-58s -> %s\n", "cudaFree on cudaMallocFromPoolAsync memory", cudaGetErrorName(cudaFree(ap)));
  (void)cudaGetLastError();
  cudaMallocFromPoolAsync(&ap, 4096, pool, nullptr);
  report("cudaMemPoolDestroy with live allocation", cudaMemPoolDestroy(pool));
  report("cudaFreeAsync after pool destroyed", cudaFreeAsync(ap, nullptr));
  report("cudaDeviceSynchronize", cudaDeviceSynchronize());

  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  report("cudaMemPoolCreate(posix fd handles)", cudaMemPoolCreate(&pool, &props));
  cudaMemPoolDestroy(pool);
  props.handleTypes = cudaMemHandleTypeFabric;
  report("cudaMemPoolCreate(fabric handles)", cudaMemPoolCreate(&pool, &props));
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.id = 5;
  report("cudaMemPoolCreate(device 5)", cudaMemPoolCreate(&pool, &props));

  cudaMemPool_t def{};
  report("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&def, 0));
  cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &threshold);
  std::printf("  default pool threshold %lu\n", (unsigned long)threshold);
  cudaMemPool_t cur{};
  cudaDeviceGetMemPool(&cur, 0);
  std::printf("  current pool is default: %d\n", cur == def);

  cudaEvent_t ev{};
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  report("cudaEventQuery(never recorded)", cudaEventQuery(ev));
  report("cudaEventSynchronize(never recorded)", cudaEventSynchronize(ev));
  cudaStream_t s{};
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  report("cudaStreamWaitEvent(never recorded)", cudaStreamWaitEvent(s, ev, 0));
  float ms = 0;
  report("cudaEventElapsedTime(disable-timing events)", cudaEventElapsedTime(&ms, ev, ev));
  cudaStreamCaptureStatus cs{};
  report("cudaStreamIsCapturing", cudaStreamIsCapturing(s, &cs));
  cudaEventDestroy(ev);
  cudaStreamDestroy(s);
  report("cudaStreamSynchronize(destroyed stream)", cudaSuccess);  // UB on real CUDA: not probed

  void* memset_target = nullptr;
  cudaMalloc(&memset_target, 1024);
  report("cudaMemset(device, out of bounds 2048)", cudaMemset(memset_target, 0, 2048));
  char hbuf[16]{};
  report("cudaMemcpy(D2H, out of bounds)",
         cudaMemcpy(hbuf, static_cast<char*>(memset_target) + 1020, 16, cudaMemcpyDeviceToHost));
  report("cudaMemcpy(HtoH kind with device src, Default)", cudaMemcpy(hbuf, memset_target, 16, cudaMemcpyDefault));
  report("cudaMemcpy(wrong kind H2D with device src)", cudaMemcpy(hbuf, memset_target, 16, cudaMemcpyHostToDevice));
  report("cudaDeviceSynchronize", cudaDeviceSynchronize());
  cudaFree(memset_target);

  // Leave work for the exit probe.
  cudaMalloc(&at_exit.ptr, 4096);
  cudaStreamCreate(&at_exit.stream);
  std::printf("main returns\n");
  std::fflush(stdout);
  return 0;
}
