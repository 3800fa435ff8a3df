// SPDX-License-Identifier: Apache-2.0
// An ordinary CUDA program, knowing nothing of rmm, that the shim tests run under LD_PRELOAD. Each
// scenario (argv[1]) exercises one part of the contract and prints what it saw as `key=value`
// lines; a failed expectation prints `FAIL: ...` and makes the exit status non-zero.

#include "client_checks.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace rmm::test::client;
using rmm::test::client::check;  // beside the driver API's check below

void check(CUresult status, char const* call)
{
  if (status != CUDA_SUCCESS) {
    char const* name = nullptr;
    cuGetErrorName(status, &name);
    std::printf("FAIL: %s returned %s\n", call, name != nullptr ? name : "?");
    std::fflush(stdout);
    std::exit(2);
  }
}

/// Writes `value` over `bytes` and reads it back: the memory is usable device memory.
bool usable(void* ptr, std::size_t bytes, unsigned char value)
{
  if (cudaMemset(ptr, value, bytes) != cudaSuccess) { return false; }
  std::vector<unsigned char> host(bytes);
  if (cudaMemcpy(host.data(), ptr, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) { return false; }
  for (auto b : host) {
    if (b != value) { return false; }
  }
  return true;
}

/// The shim's control functions, when the shim is loaded.
template <class Fn>
Fn shim_function(char const* name)
{
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

void print_report_json(char const* path)
{
  if (auto report = shim_function<int (*)(char const*)>("rmm_shim_print_report"); report != nullptr) {
    std::printf("report=%d\n", report(path));
  } else {
    std::printf("report=absent\n");
  }
}

int runtime_pairs()
{
  std::vector<void*> blocks;
  for (std::size_t size :
       {std::size_t{1}, std::size_t{256}, std::size_t{4096}, std::size_t{1} << 20, std::size_t{3} << 20}) {
    void* ptr = nullptr;
    check(cudaMalloc(&ptr, size), "cudaMalloc");
    expect(ptr != nullptr, "cudaMalloc returned null");
    expect(reinterpret_cast<std::uintptr_t>(ptr) % 256 == 0, "cudaMalloc memory is 256-byte aligned");
    expect(usable(ptr, size, static_cast<unsigned char>(size)), "cudaMalloc memory is usable");
    blocks.push_back(ptr);
  }
  for (void* ptr : blocks) { check(cudaFree(ptr), "cudaFree"); }
  for (int i = 0; i < 200; ++i) {  // reuse after frees
    void* ptr = nullptr;
    check(cudaMalloc(&ptr, 64 << 10), "cudaMalloc (loop)");
    check(cudaFree(ptr), "cudaFree (loop)");
  }
  std::printf("allocations=205\n");
  return 0;
}

int null_and_foreign()
{
  check(cudaFree(nullptr), "cudaFree(nullptr)");
  // Memory the shim did not hand out: its free reaches the real function.
  void* managed = nullptr;
  check(cudaMallocManaged(&managed, 1 << 20), "cudaMallocManaged");
  check(cudaFree(managed), "cudaFree(managed)");
  // A pointer nobody allocated gets the real error.
  auto const bogus = cudaFree(reinterpret_cast<void*>(0x1234500));
  std::printf("bogus_free=%s\n", cudaGetErrorName(bogus));
  (void)cudaGetLastError();
  expect(bogus != cudaSuccess, "freeing a pointer nobody allocated fails");
  void* ptr       = nullptr;
  auto const zero = cudaMalloc(&ptr, 0);
  std::printf("zero_bytes=%s\n", cudaGetErrorName(zero));
  // Inside the shim's own memory but not a block it handed out: still the real function's error,
  // and both blocks around it stay the program's.
  void* first  = nullptr;
  void* second = nullptr;
  check(cudaMalloc(&first, 1 << 20), "cudaMalloc (first)");
  check(cudaMalloc(&second, 1 << 20), "cudaMalloc (second)");
  auto const interior = cudaFree(static_cast<char*>(first) + 4096);
  std::printf("interior_free=%s\n", cudaGetErrorName(interior));
  (void)cudaGetLastError();
  expect(interior != cudaSuccess, "freeing a pointer inside a served block fails");
  auto const outside = cudaFree(reinterpret_cast<void*>(0x1234500));  // now below the served blocks
  (void)cudaGetLastError();
  expect(outside == bogus, "a pointer outside them gets the same error as before");
  expect(usable(first, 1 << 20, 0x51) && usable(second, 1 << 20, 0x52), "the blocks around it are intact");
  check(cudaFree(second), "cudaFree (second)");
  check(cudaFree(first), "cudaFree (first)");
  return 0;
}

int driver_symbols()
{
  check(cuInit(0), "cuInit");
  CUdevice device{};
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context{};
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUdeviceptr ptr{};
  check(cuMemAlloc(&ptr, 1 << 20), "cuMemAlloc");  // cuMemAlloc_v2 through cuda.h
  check(cuMemsetD8(ptr, 0x5A, 1 << 20), "cuMemsetD8");
  unsigned char byte = 0;
  check(cuMemcpyDtoH(&byte, ptr + 12345, 1), "cuMemcpyDtoH");
  expect(byte == 0x5A, "cuMemAlloc memory is usable");
  CUdeviceptr base{};
  std::size_t size = 0;
  check(cuMemGetAddressRange(&base, &size, ptr + 100), "cuMemGetAddressRange");
  expect(base == ptr && size == (1 << 20), "the address range is the block the program was given");
  check(cuMemFree(ptr), "cuMemFree");
  std::printf("driver=ok\n");
  return 0;
}

using get_proc_t = CUresult (*)(char const*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

int driver_lookup()
{
  void* driver = dlopen("libcuda.so.1", RTLD_NOW);
  expect(driver != nullptr, "libcuda.so.1 loads");
  auto get_proc = reinterpret_cast<get_proc_t>(dlsym(driver, "cuGetProcAddress_v2"));
  expect(get_proc != nullptr, "cuGetProcAddress_v2 found");
  // The resolver hands out the shim's wrapper, also when it is asked for itself.
  void* resolver_again = nullptr;
  check(get_proc("cuGetProcAddress", &resolver_again, 12000, 0, nullptr), "cuGetProcAddress(cuGetProcAddress)");
  std::printf("resolver_is_wrapped=%d\n", resolver_again == reinterpret_cast<void*>(get_proc));
  auto init = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(driver, "cuInit"));
  check(init(0), "cuInit");
  void* alloc      = nullptr;
  void* alloc_ptsz = nullptr;
  void* free_fn    = nullptr;
  check(get_proc("cuMemAlloc", &alloc, 12000, 0, nullptr), "resolve cuMemAlloc");
  check(get_proc("cuMemFree", &free_fn, 12000, 0, nullptr), "resolve cuMemFree");
  check(get_proc("cuMemAllocAsync", &alloc_ptsz, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, nullptr),
        "resolve cuMemAllocAsync (per-thread)");
  void* alloc_legacy = nullptr;
  check(get_proc("cuMemAllocAsync", &alloc_legacy, 12000, 0, nullptr), "resolve cuMemAllocAsync");
  expect(alloc_ptsz != alloc_legacy, "each stream flavour has its own wrapper");
  // The wrappers are the shim's: dladdr says which library they come from.
  Dl_info info{};
  dladdr(alloc, &info);
  std::printf("cuMemAlloc_from=%s\n", info.dli_fname != nullptr ? std::strrchr(info.dli_fname, '/') + 1 : "?");
  // The 32-bit ABI (a raw dlsym of "cuMemAlloc") is the driver's own.
  void* raw_v1 = dlsym(driver, "cuMemAlloc");
  dladdr(raw_v1, &info);
  std::printf("raw_cuMemAlloc_from=%s\n", info.dli_fname != nullptr ? std::strrchr(info.dli_fname, '/') + 1 : "?");
  // Not the driver's: untouched.
  std::printf("cublas_lookup=%s\n", dlsym(RTLD_DEFAULT, "cublasCreate_v2") == nullptr ? "null" : "found");
  // RTLD_NEXT from the program: as without the shim (glibc's next definition after the program).
  std::printf("rtld_next_malloc=%s\n", dlsym(RTLD_NEXT, "malloc") != nullptr ? "found" : "null");

  CUdevice device{};
  CUcontext context{};
  auto device_get = reinterpret_cast<CUresult (*)(CUdevice*, int)>(dlsym(driver, "cuDeviceGet"));
  auto retain     = reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(dlsym(driver, "cuDevicePrimaryCtxRetain"));
  auto set_ctx    = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(driver, "cuCtxSetCurrent"));
  check(device_get(&device, 0), "cuDeviceGet");
  check(retain(&context, device), "cuDevicePrimaryCtxRetain");
  check(set_ctx(context), "cuCtxSetCurrent");
  CUdeviceptr ptr{};
  check(reinterpret_cast<CUresult (*)(CUdeviceptr*, std::size_t)>(alloc)(&ptr, 4096), "wrapped cuMemAlloc");
  // Asked with the per-thread flag, an entry point with no stream argument (no per-thread flavour)
  // is the same function: the same wrapper, so the block goes back to the stack that served it.
  void* free_ptds = nullptr;
  check(get_proc("cuMemFree", &free_ptds, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, nullptr),
        "resolve cuMemFree (per-thread)");
  std::printf("per_thread_free_is_wrapped=%d\n", free_ptds == free_fn);
  check(reinterpret_cast<CUresult (*)(CUdeviceptr)>(free_ptds)(ptr), "wrapped cuMemFree (per-thread lookup)");
  return 0;
}

int stream_ordered()
{
  cudaStream_t streams[2]{};
  check(cudaStreamCreateWithFlags(&streams[0], cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check(cudaStreamCreate(&streams[1]), "cudaStreamCreate");
  for (int i = 0; i < 100; ++i) {
    auto stream = streams[i % 2];
    void* ptr   = nullptr;
    check(cudaMallocAsync(&ptr, (i + 1) * 4096, stream), "cudaMallocAsync");
    check(cudaMemsetAsync(ptr, i, (i + 1) * 4096, stream), "cudaMemsetAsync");
    check(cudaFreeAsync(ptr, stream), "cudaFreeAsync");
  }
  void* ptr = nullptr;
  check(cudaMallocAsync(&ptr, 1 << 20, cudaStreamPerThread), "cudaMallocAsync(per-thread)");
  check(cudaFreeAsync(ptr, cudaStreamPerThread), "cudaFreeAsync(per-thread)");
  for (auto s : streams) {
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    check(cudaStreamDestroy(s), "cudaStreamDestroy");
  }
  // A block from the device's default pool, named: served as cudaMallocAsync is.
  cudaMemPool_t pool{};
  check(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
  void* from_pool = nullptr;
  check(cudaMallocFromPoolAsync(&from_pool, 1 << 20, pool, cudaStreamLegacy), "cudaMallocFromPoolAsync");
  check(cudaFreeAsync(from_pool, cudaStreamLegacy), "cudaFreeAsync(driver pool block)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::printf("async=ok\n");
  return 0;
}

int out_of_memory()
{
  // The device is small (the test sets it); allocate until refused, then recover by freeing.
  std::vector<void*> blocks;
  cudaError_t status = cudaSuccess;
  for (int i = 0; i < 10000; ++i) {
    void* ptr = nullptr;
    status    = cudaMalloc(&ptr, 16 << 20);
    if (status != cudaSuccess) { break; }
    blocks.push_back(ptr);
  }
  std::printf("oom_status=%s\n", cudaGetErrorName(status));
  std::printf("blocks_before_oom=%zu\n", blocks.size());
  (void)cudaGetLastError();
  expect(!blocks.empty(), "some memory was served before running out");
  check(cudaFree(blocks.back()), "cudaFree after OOM");
  blocks.pop_back();
  void* again          = nullptr;
  auto const recovered = cudaMalloc(&again, 16 << 20);
  std::printf("recovered=%s\n", cudaGetErrorName(recovered));
  if (recovered == cudaSuccess) { blocks.push_back(again); }
  for (void* ptr : blocks) { check(cudaFree(ptr), "cudaFree"); }
  return 0;
}

int many_threads()
{
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([t, &bad] {
      std::vector<std::pair<unsigned char*, std::size_t>> live;
      for (int i = 0; i < 300; ++i) {
        std::size_t const size = std::size_t{256} << ((t + i) % 10);
        unsigned char* ptr     = nullptr;
        if (cudaMalloc(reinterpret_cast<void**>(&ptr), size) != cudaSuccess) {
          ++bad;
          continue;
        }
        cudaMemset(ptr, t, size);
        live.emplace_back(ptr, size);
        if (live.size() > 8) {
          auto [p, s]         = live.front();
          unsigned char first = 0;
          unsigned char last  = 0;
          cudaMemcpy(&first, p, 1, cudaMemcpyDeviceToHost);
          cudaMemcpy(&last, p + s - 1, 1, cudaMemcpyDeviceToHost);
          if (first != t || last != t) { ++bad; }
          cudaFree(p);
          live.erase(live.begin());
        }
      }
      for (auto [p, s] : live) { cudaFree(p); }
    });
  }
  for (auto& t : threads) { t.join(); }
  std::printf("threads_bad=%d\n", bad.load());
  expect(bad.load() == 0, "16 threads: every block held its own pattern");
  return 0;
}

int fork_child()
{
  void* before = nullptr;
  check(cudaMalloc(&before, 1 << 20), "cudaMalloc (parent)");
  void* kept = nullptr;  // freed just before the fork: the parent's thread keeps it for its next request
  check(cudaMalloc(&kept, 1 << 20), "cudaMalloc (parent)");
  check(cudaFree(kept), "cudaFree (parent)");
  std::fflush(stdout);
  pid_t const child = fork();
  if (child == 0) {
    // CUDA does not survive fork in the child; the shim must not hang or crash on its locks, nor
    // hand out the block the parent kept.
    void* ptr         = nullptr;
    auto const status = cudaMalloc(&ptr, 1 << 20);
    std::printf("child_malloc=%s\n", cudaGetErrorName(status));
    std::printf("child_got_parents_block=%d\n", status == cudaSuccess && ptr == kept ? 1 : 0);
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("child_exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  check(cudaFree(before), "cudaFree (parent)");
  void* after = nullptr;
  check(cudaMalloc(&after, 1 << 20), "cudaMalloc (parent, after fork)");
  check(cudaFree(after), "cudaFree (parent, after fork)");
  return 0;
}

/// Device memory the shim counts as free (cudaMemGetInfo), after the stack was built.
std::size_t reported_free()
{
  std::size_t free  = 0;
  std::size_t total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}

int kept_blocks()
{
  // Run over a pool of exactly 32 MiB: a request for all of it succeeds only once every block a
  // thread kept for its next allocation is back in the pool.
  void* first = nullptr;
  check(cudaMalloc(&first, 1 << 20), "cudaMalloc");
  check(cudaFree(first), "cudaFree");
  void* again = nullptr;
  check(cudaMalloc(&again, 1 << 20), "cudaMalloc (same size)");
  std::printf("same_size_reused=%d\n", again == first ? 1 : 0);
  check(cudaFree(again), "cudaFree");
  std::size_t const free_while_kept = reported_free();
  // A second free of the same pointer is refused, and the block is never handed out twice.
  auto const twice = cudaFree(again);
  (void)cudaGetLastError();
  std::printf("double_free=%s\n", cudaGetErrorName(twice));
  void* a = nullptr;
  void* b = nullptr;
  check(cudaMalloc(&a, 1 << 20), "cudaMalloc (after the double free)");
  check(cudaMalloc(&b, 1 << 20), "cudaMalloc (after the double free)");
  std::printf("handed_out_twice=%d\n", a == b ? 1 : 0);
  check(cudaFree(a), "cudaFree");
  check(cudaFree(b), "cudaFree");
  // A request of another size first gives the kept block back.
  void* whole = nullptr;
  std::printf("whole_pool_after_free=%s\n", cudaGetErrorName(cudaMalloc(&whole, 32 << 20)));
  (void)cudaGetLastError();
  if (whole != nullptr) { check(cudaFree(whole), "cudaFree (whole pool)"); }
  // Too large to keep: back in the pool at once.
  std::size_t const free_after_give_back = reported_free();
  std::printf("free_counts_kept_block=%d\n", free_while_kept == free_after_give_back ? 1 : 0);
  // A thread that ends gives its kept block back.
  std::thread{[] {
    void* mine = nullptr;
    check(cudaMalloc(&mine, 1 << 20), "cudaMalloc (thread)");
    check(cudaFree(mine), "cudaFree (thread)");
  }}.join();
  std::printf("whole_pool_after_thread=%s\n", cudaGetErrorName(cudaMalloc(&whole, 32 << 20)));
  (void)cudaGetLastError();
  if (whole != nullptr) { check(cudaFree(whole), "cudaFree (whole pool)"); }
  return 0;
}

int free_at_thread_exit()
{
  std::thread{[] {
    struct freer {
      void* ptr{nullptr};
      ~freer()
      {
        if (ptr != nullptr) { check(cudaFree(ptr), "cudaFree (at the thread's exit)"); }
      }
    };
    // Made before the thread's first call into the shim, so destroyed after the shim's own
    // thread-local state: the free comes after the thread's counts were folded in.
    thread_local freer at_exit;
    at_exit.ptr = nullptr;
    check(cudaMalloc(&at_exit.ptr, 1 << 20), "cudaMalloc");
  }}.join();
  return 0;
}

/// One cudaMalloc and cudaFree of 1 MiB, from a pthread key's destructor.
void allocate_and_free_at_thread_exit()
{
  void* ptr = nullptr;
  check(cudaMalloc(&ptr, 1 << 20), "cudaMalloc (in a key destructor)");
  check(cudaFree(ptr), "cudaFree (in a key destructor)");
}

/// Threads whose first call into CUDA is made by a pthread key's destructor, after the thread's C++
/// thread-locals are gone (a library freeing a per-thread buffer at thread exit does this): the
/// heap must not grow with the number of such threads.
int first_call_in_key_destructor()
{
  static pthread_key_t key{};
  if (pthread_key_create(&key, [](void*) { allocate_and_free_at_thread_exit(); }) != 0) {
    std::printf("FAIL: pthread_key_create\n");
    return 1;
  }
  auto const round = [] {
    for (int i = 0; i < 100; ++i) {
      std::thread{[] { pthread_setspecific(key, &key); }}.join();
    }
  };
  round();  // whatever is made once, the first time a thread ends this way
  auto const before = mallinfo2().uordblks;
  for (int i = 0; i < 5; ++i) { round(); }
  auto const grown = static_cast<long long>(mallinfo2().uordblks) - static_cast<long long>(before);
  std::printf("heap_growth_per_thread=%lld\n", grown / 500);
  return 0;
}

std::uint64_t pool_attribute(CUmemoryPool pool, CUmemPool_attribute attribute)
{
  cuuint64_t value = 0;
  check(cuMemPoolGetAttribute(pool, attribute, &value), "cuMemPoolGetAttribute");
  return value;
}

/// XLA's stream-ordered allocator (XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async): allocations from the
/// device's default pool by name, its release threshold set to the pool's size, its usage read
/// back from the pool's attributes, and a trim. Under the shim the stack serves them, and the
/// attributes include what the stack holds.
int default_pool()
{
  check(cudaFree(nullptr), "cudaFree(nullptr)");  // the runtime's context
  CUmemoryPool pool{};
  check(cuDeviceGetDefaultMemPool(&pool, 0), "cuDeviceGetDefaultMemPool");
  cuuint64_t threshold = 64ull << 20;
  check(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold), "set the release threshold");
  std::printf("threshold=%llu\n",
              static_cast<unsigned long long>(pool_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)));

  CUstream stream{};
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  constexpr std::size_t sizes[] = {1 << 20, 3 << 20, 256, 5 << 20};
  std::size_t live_bytes        = 0;
  std::vector<CUdeviceptr> blocks;
  for (auto bytes : sizes) {
    CUdeviceptr ptr{};
    check(cuMemAllocFromPoolAsync(&ptr, bytes, pool, stream), "cuMemAllocFromPoolAsync");
    check(cuMemsetD8Async(ptr, 0x5a, bytes, stream), "cuMemsetD8Async");
    blocks.push_back(ptr);
    live_bytes += bytes;
  }
  // The runtime's twin, on the per-thread default stream: it reaches the driver's entry point.
  void* runtime_block = nullptr;
  check(cudaMallocFromPoolAsync(&runtime_block, 2 << 20, pool, cudaStreamPerThread), "cudaMallocFromPoolAsync");
  live_bytes += 2 << 20;
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  expect(usable(runtime_block, 2 << 20, 0x33), "a block from the default pool is usable");

  auto const used     = pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
  auto const reserved = pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
  expect(used >= live_bytes, "the pool's used bytes include the live blocks");
  expect(reserved >= used, "the pool holds at least what is used");
  std::printf("used_with_blocks=%d\n", used >= live_bytes ? 1 : 0);

  for (auto ptr : blocks) { check(cuMemFreeAsync(ptr, stream), "cuMemFreeAsync"); }
  check(cudaFreeAsync(runtime_block, cudaStreamPerThread), "cudaFreeAsync");
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  check(cudaStreamSynchronize(cudaStreamPerThread), "cudaStreamSynchronize");
  std::printf("used_after_free=%llu\n",
              static_cast<unsigned long long>(pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)));
  auto const high = pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH);
  expect(high >= live_bytes, "the used high-water mark saw every block live at once");
  cuuint64_t zero = 0;
  check(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero), "reset the used high-water mark");
  std::printf("used_high_after_reset=%llu\n",
              static_cast<unsigned long long>(pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH)));

  expect(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) > 0, "the stack still holds its memory");
  check(cuMemPoolTrimTo(pool, 0), "cuMemPoolTrimTo");
  std::printf("reserved_after_trim=%llu\n",
              static_cast<unsigned long long>(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)));
  check(cuStreamDestroy(stream), "cuStreamDestroy");
  return 0;
}

/// Device memory the shim does not serve, each kind once: managed memory, a pool the program
/// names, and physical memory the program maps itself. Each must work and be counted.
int passed_by()
{
  // The stack itself maps memory with cuMemCreate as it grows: that is not the program's.
  void* served = nullptr;
  check(cudaMalloc(&served, 1 << 20), "cudaMalloc");
  check(cudaFree(served), "cudaFree");
  void* managed = nullptr;
  check(cudaMallocManaged(&managed, 1 << 20), "cudaMallocManaged");
  expect(usable(managed, 1 << 20, 0x41), "managed memory is usable");
  check(cudaFree(managed), "cudaFree (managed)");

  cudaMemPoolProps props{};
  props.allocType     = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id   = 0;
  cudaMemPool_t pool{};
  check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  void* pooled = nullptr;
  check(cudaMallocFromPoolAsync(&pooled, 1 << 20, pool, cudaStreamLegacy), "cudaMallocFromPoolAsync");
  check(cudaFreeAsync(pooled, cudaStreamLegacy), "cudaFreeAsync (from the program's pool)");
  check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
  check(cudaMemPoolDestroy(pool), "cudaMemPoolDestroy");

  CUmemAllocationProp prop{};
  prop.type               = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type      = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id        = 0;
  std::size_t granularity = 0;
  check(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        "cuMemGetAllocationGranularity");
  CUmemGenericAllocationHandle handle{};
  check(cuMemCreate(&handle, granularity, &prop, 0), "cuMemCreate");
  check(cuMemRelease(handle), "cuMemRelease");
  // Calls the driver refuses made or destroyed nothing: not counted.
  std::printf("refused_release=%d\n", cuMemRelease(handle) != CUDA_SUCCESS);
  std::printf("refused_create=%d\n", cuMemCreate(&handle, granularity + 1, &prop, 0) != CUDA_SUCCESS);
  return 0;
}

/// Threads whose first cudaMalloc/cudaFree come in the last round of pthread key destructors: the
/// shim never sees them end, yet the blocks they keep must stay safe to reach (their threads'
/// storage is gone) and go back when the program asks for memory.
int free_in_last_destructor_round()
{
  // The shim's own keys first, as in a program that allocated before: within one round glibc
  // calls the destructors in the keys' order, so a key made later would still be seen.
  void* early = nullptr;
  check(cudaMalloc(&early, 1 << 20), "cudaMalloc (before the key)");
  check(cudaFree(early), "cudaFree (before the key)");
  static pthread_key_t key{};
  static thread_local int round = 0;
  if (pthread_key_create(&key, [](void* value) {
        if (++round < 4) {  // glibc runs the destructors in four rounds at most
          pthread_setspecific(key, value);
          return;
        }
        allocate_and_free_at_thread_exit();
      }) != 0) {
    std::printf("FAIL: pthread_key_create\n");
    return 1;
  }
  std::vector<std::thread> threads;  // at once: more stacks than glibc keeps cached, so theirs are unmapped
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([] { pthread_setspecific(key, &key); });
  }
  for (auto& thread : threads) { thread.join(); }
  std::size_t free  = 0;
  std::size_t total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo (counts every kept block)");
  auto const release = reinterpret_cast<std::size_t (*)()>(dlsym(RTLD_DEFAULT, "rmm_shim_release"));
  expect(release != nullptr, "the shim exports rmm_shim_release");
  if (release != nullptr) { std::printf("released=%zu\n", release()); }
  return 0;
}

int two_devices()
{
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  std::printf("devices=%d\n", count);
  if (count < 2) { return 0; }
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  void* on0 = nullptr;
  check(cudaMalloc(&on0, 1 << 20), "cudaMalloc (device 0)");
  check(cudaFree(on0), "cudaFree (device 0)");  // kept by this thread for its next request on device 0
  check(cudaSetDevice(1), "cudaSetDevice(1)");
  void* on1 = nullptr;
  check(cudaMalloc(&on1, 1 << 20), "cudaMalloc (device 1, same size)");
  std::printf("kept_block_crossed_devices=%d\n", on1 == on0 ? 1 : 0);
  cudaPointerAttributes attributes{};
  check(cudaPointerGetAttributes(&attributes, on1), "cudaPointerGetAttributes");
  std::printf("device_of_block=%d\n", attributes.device);
  expect(usable(on1, 1 << 20, 0x31), "device 1's block is usable on device 1");
  // A free finds the block's owner whatever device is current.
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  void* again0 = nullptr;
  check(cudaMalloc(&again0, 2 << 20), "cudaMalloc (device 0)");
  check(cudaSetDevice(1), "cudaSetDevice(1)");
  check(cudaFree(again0), "cudaFree of device 0's block with device 1 current");
  check(cudaFree(on1), "cudaFree (device 1)");
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  return 0;
}

/// Allocation pairs on each device in turn (each logs every call); prints how many.
int two_device_pairs()
{
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  std::printf("devices=%d\n", count);
  if (count < 2) { return 0; }
  int pairs = 0;
  for (int i = 0; i < 500; ++i) {
    for (int device = 0; device < 2; ++device) {
      check(cudaSetDevice(device), "cudaSetDevice");
      void* p = nullptr;
      check(cudaMalloc(&p, 4096 * static_cast<std::size_t>(1 + i % 5)), "cudaMalloc");
      check(cudaFree(p), "cudaFree");
      ++pairs;
    }
  }
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  std::printf("pairs=%d\n", pairs);
  return 0;
}

/// The program of the memory-limit example that failed natively never: a non-blocking stream, 40
/// MiB allocated and freed (the free waits in an epoch), then 48 MiB under a 64 MiB limit.
int limit_with_waiting_frees()
{
  cudaStream_t stream{};
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* first = nullptr;
  check(cudaMalloc(&first, std::size_t{40} << 20), "cudaMalloc 40 MiB");
  check(cudaFree(first), "cudaFree");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  void* second      = nullptr;
  auto const status = cudaMalloc(&second, std::size_t{48} << 20);
  std::printf("second_malloc=%s\n", cudaGetErrorName(status));
  if (status == cudaSuccess) { check(cudaFree(second), "cudaFree"); }
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}

/// A pool full of blocks whose frees wait for a busy non-blocking stream, then a request that fits
/// only once they are given back: the before-growth hook hands them back through the top of the
/// stack while the allocating thread is inside it.
int growth_while_frees_wait()
{
  cudaStream_t busy{};
  check(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  std::vector<void*> blocks;
  for (int i = 0; i < 60; ++i) {
    void* p = nullptr;
    check(cudaMalloc(&p, 1 << 20), "cudaMalloc 1 MiB");
    blocks.push_back(p);
  }
  // Work on the non-blocking stream while the blocks are freed: their epochs wait for it.
  check(cudaLaunchHostFunc(
          busy, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds{200}); }, nullptr),
        "cudaLaunchHostFunc");
  for (void* p : blocks) { check(cudaFree(p), "cudaFree"); }
  void* large       = nullptr;
  auto const status = cudaMalloc(&large, std::size_t{32} << 20);
  std::printf("large_malloc=%s\n", cudaGetErrorName(status));
  if (status == cudaSuccess) { check(cudaFree(large), "cudaFree"); }
  check(cudaStreamSynchronize(busy), "cudaStreamSynchronize");
  check(cudaStreamDestroy(busy), "cudaStreamDestroy");
  return 0;
}

/// Device memory held after a reset, compared with before the first allocation: what a stack kept
/// across the reset (the memory a pool mapped itself outlives it).
int reset_gives_memory_back()
{
  check(cudaFree(nullptr), "cudaFree(nullptr)");
  std::size_t before = 0;
  std::size_t total  = 0;
  check(cudaMemGetInfo(&before, &total), "cudaMemGetInfo");
  void* p = nullptr;
  check(cudaMalloc(&p, std::size_t{512} << 20), "cudaMalloc 512 MiB");
  expect(usable(p, 1 << 20, 0x42), "the block is usable");
  check(cudaFree(p), "cudaFree");
  check(cudaDeviceReset(), "cudaDeviceReset");
  check(cudaFree(nullptr), "cudaFree(nullptr) after the reset");
  std::size_t after = 0;
  check(cudaMemGetInfo(&after, &total), "cudaMemGetInfo");
  auto const held = before > after ? before - after : 0;
  std::printf("held_after_reset_mib=%zu\n", held >> 20);
  void* q = nullptr;
  check(cudaMalloc(&q, 1 << 20), "cudaMalloc after the reset");
  expect(usable(q, 1 << 20, 0x43), "memory allocated after the reset is usable");
  check(cudaFree(q), "cudaFree");
  return 0;
}

/// Forks before CUDA starts; parent and child then both allocate (and log, when the log is on).
int fork_then_allocate()
{
  std::fflush(stdout);
  pid_t const child = fork();
  auto const pairs  = [](char const* who) {
    for (int i = 0; i < 300; ++i) {
      void* p = nullptr;
      check(cudaMalloc(&p, 8192), who);
      check(cudaFree(p), who);
    }
  };
  if (child == 0) {
    pairs("cudaMalloc (child)");
    std::fflush(stdout);
    std::exit(failures == 0 ? 0 : 1);
  }
  pairs("cudaMalloc (parent)");
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("child_pid=%d\nchild_exit=%d\n", static_cast<int>(child), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}

int kept_blocks_of_other_threads()
{
  // Run over a pool of exactly 32 MiB. A thread keeps a block and waits: the whole pool can still
  // be had from another thread, the kept block taken back before the pool would grow.
  std::mutex mutex;
  std::condition_variable changed;
  bool kept = false;
  bool done = false;
  std::thread idle{[&] {
    void* block = nullptr;
    check(cudaMalloc(&block, 1 << 20), "cudaMalloc (idle thread)");
    check(cudaFree(block), "cudaFree (idle thread)");  // kept by this thread, which then waits
    std::unique_lock lock{mutex};
    kept = true;
    changed.notify_all();
    changed.wait(lock, [&] { return done; });
  }};
  {
    std::unique_lock lock{mutex};
    changed.wait(lock, [&] { return kept; });
  }
  std::size_t free  = 0;
  std::size_t total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  void* whole = nullptr;
  std::printf("whole_pool_while_another_thread_keeps_a_block=%s\n", cudaGetErrorName(cudaMalloc(&whole, 32 << 20)));
  (void)cudaGetLastError();
  std::size_t free_after = 0;
  if (whole != nullptr) {
    check(cudaFree(whole), "cudaFree (whole pool)");
    check(cudaMemGetInfo(&free_after, &total), "cudaMemGetInfo");
    std::printf("memory_info_counted_the_kept_block=%d\n", free == free_after ? 1 : 0);
  }
  {
    std::lock_guard lock{mutex};
    done = true;
  }
  changed.notify_all();
  idle.join();
  // A free made after the thread's blocks went back at its end (in a thread-specific value's
  // destructor that runs later) goes to the stack, not into a cache nobody will empty.
  static pthread_key_t late_key{};
  pthread_key_create(&late_key, [](void* block) { check(cudaFree(block), "cudaFree (at the thread's very end)"); });
  std::thread{[] {
    void* first = nullptr;  // the thread's first kept block: its end is watched from here on
    check(cudaMalloc(&first, 1 << 20), "cudaMalloc");
    check(cudaFree(first), "cudaFree");
    void* late = nullptr;
    check(cudaMalloc(&late, 1 << 20), "cudaMalloc (freed at the thread's very end)");
    pthread_setspecific(late_key, late);
  }}.join();
  whole = nullptr;
  std::printf("whole_pool_after_a_late_free=%s\n", cudaGetErrorName(cudaMalloc(&whole, 32 << 20)));
  (void)cudaGetLastError();
  if (whole != nullptr) { check(cudaFree(whole), "cudaFree (whole pool)"); }
  return 0;
}

int memory_info()
{
  // First use loads modules and builds the stack: measure after it.
  void* warm = nullptr;
  check(cudaMalloc(&warm, 1 << 20), "cudaMalloc (warm-up)");
  check(cudaMemset(warm, 0, 1 << 20), "cudaMemset (warm-up)");
  check(cudaFree(warm), "cudaFree (warm-up)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::size_t free_before = 0;
  std::size_t total       = 0;
  check(cudaMemGetInfo(&free_before, &total), "cudaMemGetInfo");
  void* ptr = nullptr;
  check(cudaMalloc(&ptr, 64 << 20), "cudaMalloc");
  std::size_t free_live = 0;
  check(cudaMemGetInfo(&free_live, &total), "cudaMemGetInfo");
  check(cudaFree(ptr), "cudaFree");
  std::size_t free_after = 0;
  check(cudaMemGetInfo(&free_after, &total), "cudaMemGetInfo");
  std::printf("free_before=%zu\nfree_live=%zu\nfree_after=%zu\ntotal=%zu\n", free_before, free_live, free_after, total);
  expect(free_live + (64 << 20) <= free_before + (1 << 20), "a live block counts as used");
  expect(free_after >= free_before - (1 << 20), "a freed block counts as free again, pool or not");
  return 0;
}

int live_at_exit()
{
  for (int i = 0; i < 10; ++i) {
    void* ptr = nullptr;
    check(cudaMalloc(&ptr, 1 << 20), "cudaMalloc");
  }
  void* freed = nullptr;
  check(cudaMalloc(&freed, 1 << 20), "cudaMalloc");
  check(cudaFree(freed), "cudaFree");
  std::printf("leaving=10\n");
  return 0;
}

/// Holds a stream until the program opens it (or 10 s passed): work queued behind it is pending for
/// as long as the program wants, with no timing in the outcome. `opened_in_time` says whether the
/// program got to open it, that is, whether nothing the program did meanwhile waited for the stream.
struct gate {
  std::atomic<bool> open{false};
  std::atomic<bool> opened_in_time{false};

  void hold(cudaStream_t stream)
  {
    check(cudaLaunchHostFunc(
            stream,
            [](void* self) {
              auto& g        = *static_cast<gate*>(self);
              auto const end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
              while (!g.open.load() && std::chrono::steady_clock::now() < end) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
              }
              g.opened_in_time = g.open.load();
            },
            this),
          "cudaLaunchHostFunc (gate)");
  }
};

/// Reads the first and last byte of `block` as four hex digits.
std::string ends_of(void* block, std::size_t size)
{
  unsigned char head = 0;
  unsigned char tail = 0;
  check(cudaMemcpy(&head, block, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(&tail, static_cast<char*>(block) + size - 1, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
  char text[8];
  std::snprintf(text, sizeof text, "%02x%02x", head, tail);
  return text;
}

constexpr std::size_t block_size      = 32 << 20;  // the one block of the tests' one-block pool
constexpr std::size_t frees_per_epoch = 32;        // the shim closes an epoch every 32 frees

/// The first owner's block, with a write of 0xAA to it queued on `stream` behind `held`.
void* first_owner_with_a_pending_write(gate& held, cudaStream_t stream)
{
  void* first = nullptr;
  check(cudaMalloc(&first, block_size), "cudaMalloc (first owner)");
  held.hold(stream);
  check(cudaMemsetAsync(first, 0xAA, block_size, stream), "cudaMemsetAsync (pending write)");
  return first;
}

/// Frees the first owner's block while its write is pending and allocates the block's next owner
/// (the one-block pool has nothing else to give); prints whether it is the same block.
void* next_owner_of(void* first)
{
  check(cudaFree(first), "cudaFree (work still pending)");
  void* second = nullptr;
  check(cudaMalloc(&second, block_size), "cudaMalloc (second owner)");
  std::printf("same_block=%d\n", second == first);
  return second;
}

/// Opens `held` from another thread after a while: for a cudaMalloc that must wait for it.
std::thread open_later(gate& held)
{
  return std::thread{[&held] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    held.open = true;
  }};
}

/// A block is freed with cudaFree while work queued on a non-blocking stream still writes it; the
/// pool is exactly one block large, so the next cudaMalloc can only return that block. It must not
/// hand it over before the pending write landed: the new owner's own write must be what remains.
int premature_reuse()
{
  cudaStream_t busy{};
  check(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  gate held;
  void* first  = first_owner_with_a_pending_write(held, busy);
  auto opener  = open_later(held);  // the next owner has to wait for the pending write
  void* second = next_owner_of(first);
  check(cudaMemset(second, 0x55, block_size), "cudaMemset (second owner)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  opener.join();
  auto const seen = ends_of(second, block_size);
  std::printf("second_owner_sees=%s\n", seen.c_str());
  expect(seen == "5555", "the freed block's pending write landed after its new owner's write");
  check(cudaFree(second), "cudaFree");
  check(cudaStreamDestroy(busy), "cudaStreamDestroy");
  return 0;
}

/// With no non-blocking stream, a block freed while work on the legacy stream still writes it is
/// reused at once, in the legacy stream's order: the next cudaMalloc neither waits for that work
/// nor lets the new owner's write land before it.
int legacy_order_reuse()
{
  gate held;
  void* second = next_owner_of(first_owner_with_a_pending_write(held, nullptr));
  held.open    = true;
  check(cudaMemset(second, 0x55, block_size), "cudaMemset (second owner)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::printf("reused_without_waiting=%d\n", held.opened_in_time.load() ? 1 : 0);
  std::printf("second_owner_sees=%s\n", ends_of(second, block_size).c_str());
  check(cudaFree(second), "cudaFree");
  return 0;
}

/// A block handed out in the legacy stream's order, while the legacy stream still writes it for its
/// old owner, goes to a non-blocking stream created afterwards: that stream must not overtake the
/// old owner's write.
int new_stream_after_legacy_reuse()
{
  gate held;
  void* second = next_owner_of(first_owner_with_a_pending_write(held, nullptr));
  cudaStream_t fresh{};
  check(cudaStreamCreateWithFlags(&fresh, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check(cudaMemsetAsync(second, 0x55, block_size, fresh), "cudaMemsetAsync (second owner, new stream)");
  held.open = true;
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::printf("second_owner_sees=%s\n", ends_of(second, block_size).c_str());
  check(cudaFree(second), "cudaFree");
  check(cudaStreamDestroy(fresh), "cudaStreamDestroy");
  return 0;
}

/// A non-blocking stream destroyed while its work still writes a block, which is then freed: the
/// block goes to no new owner before that work is done, although the stream is gone.
int destroyed_stream_still_writing()
{
  cudaStream_t doomed{};
  check(cudaStreamCreateWithFlags(&doomed, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  gate held;
  void* first = first_owner_with_a_pending_write(held, doomed);
  check(cudaStreamDestroy(doomed), "cudaStreamDestroy (work still pending)");
  auto opener  = open_later(held);  // the next owner may have to wait for the destroyed stream
  void* second = next_owner_of(first);
  check(cudaMemset(second, 0x55, block_size), "cudaMemset (second owner)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  opener.join();
  std::printf("second_owner_sees=%s\n", ends_of(second, block_size).c_str());
  check(cudaFree(second), "cudaFree");
  return 0;
}

/// The pool is full of blocks freed in two epochs: the older one's work is done, the newer one's
/// waits behind a held non-blocking stream. A cudaMalloc that fits in the older epoch's blocks is
/// served from them at once; it does not wait for the newer epoch (the host would lose its lead
/// over the device for memory it does not need).
int oldest_epoch_first()
{
  cudaStream_t busy{};
  check(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  constexpr std::size_t per_epoch = frees_per_epoch;
  constexpr std::size_t small     = block_size / (2 * per_epoch);
  std::vector<void*> older(per_epoch);
  std::vector<void*> newer(per_epoch);
  for (auto* blocks : {&older, &newer}) {
    for (auto& p : *blocks) { check(cudaMalloc(&p, small), "cudaMalloc (filling the pool)"); }
  }
  for (auto* p : older) { check(cudaFree(p), "cudaFree (older epoch)"); }
  gate held;
  held.hold(busy);
  for (auto* p : newer) { check(cudaFree(p), "cudaFree (newer epoch, behind the held stream)"); }
  void* big = nullptr;
  check(cudaMalloc(&big, block_size / 2), "cudaMalloc (fits in the older epoch)");
  held.open             = true;
  auto const lowest     = *std::min_element(older.begin(), older.end());
  auto const from_older = big >= lowest && static_cast<char*>(big) < static_cast<char*>(lowest) + per_epoch * small;
  check(cudaStreamSynchronize(busy), "cudaStreamSynchronize");
  std::printf("served_without_waiting=%d\n", held.opened_in_time.load() ? 1 : 0);
  std::printf("from_older_epoch=%d\n", from_older ? 1 : 0);
  check(cudaFree(big), "cudaFree");
  check(cudaStreamDestroy(busy), "cudaStreamDestroy");
  return 0;
}

/// A full epoch of frees while the legacy stream still writes the first block and a non-blocking
/// stream exists but is idle: the epoch is fenced, so the next cudaMalloc gets the memory at once,
/// and the new owner's write on the non-blocking stream still lands after the old owner's.
int fenced_reuse()
{
  cudaStream_t idle{};
  check(cudaStreamCreateWithFlags(&idle, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check(cudaStreamSynchronize(idle), "cudaStreamSynchronize");  // done with its creation fence: idle
  constexpr std::size_t per_epoch = frees_per_epoch;
  constexpr std::size_t small     = block_size / per_epoch;
  std::vector<void*> blocks(per_epoch);
  for (auto& p : blocks) { check(cudaMalloc(&p, small), "cudaMalloc (filling the pool)"); }
  void* first = *std::min_element(blocks.begin(), blocks.end());
  gate held;
  held.hold(nullptr);
  check(cudaMemsetAsync(first, 0xAA, small, nullptr), "cudaMemsetAsync (pending write, legacy stream)");
  for (auto* p : blocks) { check(cudaFree(p), "cudaFree (an epoch's worth)"); }
  void* whole = nullptr;
  check(cudaMalloc(&whole, block_size), "cudaMalloc (the whole pool again)");
  check(cudaMemsetAsync(whole, 0x55, block_size, idle), "cudaMemsetAsync (new owner, non-blocking stream)");
  held.open = true;
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::printf("served_without_waiting=%d\n", held.opened_in_time.load() ? 1 : 0);
  std::printf("new_owner_sees=%s\n", ends_of(first, small).c_str());
  check(cudaFree(whole), "cudaFree");
  check(cudaStreamDestroy(idle), "cudaStreamDestroy");
  return 0;
}

/// Pairs of cudaMalloc and cudaFree beside RMM_TEST_STREAMS idle non-blocking streams: every free
/// goes through an epoch, and the report counts how many epochs were closed.
int epochs_beside_streams()
{
  char const* count = std::getenv("RMM_TEST_STREAMS");
  std::vector<cudaStream_t> streams(count != nullptr ? std::strtoul(count, nullptr, 10) : 32);
  for (auto& s : streams) {
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }
  for (int pair = 0; pair < 1024; ++pair) {
    void* p = nullptr;
    check(cudaMalloc(&p, 4096), "cudaMalloc");
    check(cudaFree(p), "cudaFree");
  }
  for (auto s : streams) { check(cudaStreamDestroy(s), "cudaStreamDestroy"); }
  return 0;
}

/// A block freed with cudaFreeAsync while the legacy stream still writes it, with an idle
/// non-blocking stream around: that free has no fence, so the next cudaMalloc must not hand the
/// block to work on the non-blocking stream before the write is done.
int stream_ordered_free_then_malloc()
{
  cudaStream_t idle{};
  check(cudaStreamCreateWithFlags(&idle, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  gate held;
  void* first = first_owner_with_a_pending_write(held, nullptr);
  check(cudaFreeAsync(first, nullptr), "cudaFreeAsync (legacy stream, write pending)");
  auto opener  = open_later(held);  // the next owner may have to wait for the pending write
  void* second = nullptr;
  check(cudaMalloc(&second, block_size), "cudaMalloc (second owner)");
  std::printf("same_block=%d\n", second == first);
  check(cudaMemsetAsync(second, 0x55, block_size, idle), "cudaMemsetAsync (second owner, non-blocking stream)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  opener.join();
  std::printf("second_owner_sees=%s\n", ends_of(second, block_size).c_str());
  check(cudaFree(second), "cudaFree");
  check(cudaStreamDestroy(idle), "cudaStreamDestroy");
  return 0;
}

/// A block freed with cudaFreeAsync on a stream whose write to it is still queued, the stream then
/// destroyed and a new one created, which the driver may give the destroyed stream's handle: the
/// new stream is another stream (the shim looked its id up once, when it was created), so it must
/// not take the block in the old stream's order, before that write landed.
int reused_stream_handle()
{
  cudaStream_t doomed{};
  check(cudaStreamCreateWithFlags(&doomed, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (first stream)");
  void* first = nullptr;
  check(cudaMallocAsync(&first, block_size, doomed), "cudaMallocAsync (first owner)");
  gate held;
  held.hold(doomed);
  check(cudaMemsetAsync(first, 0xAA, block_size, doomed), "cudaMemsetAsync (pending write)");
  check(cudaFreeAsync(first, doomed), "cudaFreeAsync (write pending)");
  check(cudaStreamDestroy(doomed), "cudaStreamDestroy (work pending)");
  cudaStream_t fresh{};
  check(cudaStreamCreateWithFlags(&fresh, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (second stream)");
  std::printf("same_handle=%d\n", fresh == doomed);
  auto opener  = open_later(held);  // the new owner may have to wait for the pending write
  void* second = nullptr;
  check(cudaMallocAsync(&second, block_size, fresh), "cudaMallocAsync (second owner)");
  std::printf("same_block=%d\n", second == first);
  check(cudaMemsetAsync(second, 0x55, block_size, fresh), "cudaMemsetAsync (second owner)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  opener.join();
  std::printf("second_owner_sees=%s\n", ends_of(second, block_size).c_str());
  check(cudaFreeAsync(second, fresh), "cudaFreeAsync");
  check(cudaStreamDestroy(fresh), "cudaStreamDestroy");
  return 0;
}

/// A kernel that writes 0xAA to the first and last byte of a block: PTX, so that this program needs
/// no device compiler (on a GPU only; the emulator runs no kernels).
constexpr char mark_ends_ptx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry mark_ends(.param .u64 block, .param .u64 size)
{
  .reg .b64 %rd<5>;
  .reg .b16 %rs<2>;
  ld.param.u64 %rd1, [block];
  ld.param.u64 %rd2, [size];
  cvta.to.global.u64 %rd3, %rd1;
  mov.u16 %rs1, 170;
  st.global.u8 [%rd3], %rs1;
  add.s64 %rd4, %rd3, %rd2;
  st.global.u8 [%rd4+-1], %rs1;
  ret;
}
)";

/// Work that writes (or reads) a block, to be submitted through the entry point `way` names. What
/// could make the submission itself wait is done beforehand, by prepare(), before the stream is
/// held: a copy from pageable memory waits for the stream's earlier work, and so does a kernel's
/// first launch, which loads it (CUDA loads modules lazily).
struct prepared_work {
  std::string_view way;
  void* block{nullptr};
  std::size_t size{block_size};
  void* arguments[2]{&block, &size};  // the kernel's; the object stays where it was made
  unsigned char* host{nullptr};       // page-locked
  cudaKernel_t kernel{};
  CUfunction function{};
  cudaGraphExec_t graph{};

  prepared_work(std::string_view w, void* b) : way{w}, block{b} {}
  prepared_work(prepared_work const&)            = delete;
  prepared_work& operator=(prepared_work const&) = delete;
  ~prepared_work()
  {
    if (graph != nullptr) { (void)cudaGraphExecDestroy(graph); }
    if (host != nullptr) { (void)cudaFreeHost(host); }
  }

  void prepare()
  {
    if (way.starts_with("memcpy-host") || way.starts_with("memcpy-device-to-host") || way == "driver-copy") {
      check(cudaMallocHost(reinterpret_cast<void**>(&host), block_size), "cudaMallocHost");
      std::memset(host, 0xAA, block_size);
    }
    if (way != "kernel" && way != "driver-kernel" && way != "graph") { return; }
    cudaLibrary_t library{};
    check(cudaLibraryLoadData(&library, mark_ends_ptx, nullptr, nullptr, 0, nullptr, nullptr, 0),
          "cudaLibraryLoadData");
    check(cudaLibraryGetKernel(&kernel, library, "mark_ends"), "cudaLibraryGetKernel");
    check(cuKernelGetFunction(&function, reinterpret_cast<CUkernel>(kernel)), "cuKernelGetFunction");
    check(cuFuncLoad(function), "cuFuncLoad");
    if (way == "graph") {
      cudaGraph_t built{};
      check(cudaGraphCreate(&built, 0), "cudaGraphCreate");
      cudaKernelNodeParams node{};
      node.func         = reinterpret_cast<void*>(kernel);
      node.gridDim      = dim3{1};
      node.blockDim     = dim3{1};
      node.kernelParams = arguments;
      cudaGraphNode_t added{};
      check(cudaGraphAddKernelNode(&added, built, nullptr, 0, &node), "cudaGraphAddKernelNode");
      check(cudaGraphInstantiate(&graph, built, 0), "cudaGraphInstantiate");
      check(cudaGraphDestroy(built), "cudaGraphDestroy");
    }
  }

  /// Submits the work to `stream`.
  void submit(cudaStream_t stream)
  {
    auto const device_block = reinterpret_cast<CUdeviceptr>(block);
    if (way == "memset") {
      check(cudaMemsetAsync(block, 0xAA, block_size, stream), "cudaMemsetAsync");
    } else if (way == "memcpy-host-to-device") {
      check(cudaMemcpyAsync(block, host, block_size, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (HtoD)");
    } else if (way == "memcpy-device-to-host") {
      check(cudaMemcpyAsync(host, block, block_size, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (DtoH)");
    } else if (way == "memcpy-within-device") {
      check(cudaMemcpyAsync(block, static_cast<char*>(block) + block_size / 2, block_size / 2, cudaMemcpyDeviceToDevice,
                            stream),
            "cudaMemcpyAsync (DtoD)");
    } else if (way == "driver-memset") {  // the driver's symbol, linked: reached through the shim's export
      check(cuMemsetD32Async(device_block, 0xAAAAAAAA, block_size / 4, stream), "cuMemsetD32Async");
    } else if (way == "driver-copy") {
      check(cuMemcpyHtoDAsync(device_block, host, block_size, stream), "cuMemcpyHtoDAsync");
    } else if (way == "host-function") {
      check(cudaLaunchHostFunc(
              stream, [](void*) {}, nullptr),
            "cudaLaunchHostFunc");
    } else if (way == "callback") {
      check(cudaStreamAddCallback(
              stream, [](cudaStream_t, cudaError_t, void*) {}, nullptr, 0),
            "cudaStreamAddCallback");
    } else if (way == "kernel") {
      check(cudaLaunchKernel(reinterpret_cast<void const*>(kernel), dim3{1}, dim3{1}, arguments, 0, stream),
            "cudaLaunchKernel");
    } else if (way == "driver-kernel") {
      check(cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, arguments, nullptr), "cuLaunchKernel");
    } else if (way == "graph") {
      check(cudaGraphLaunch(graph, stream), "cudaGraphLaunch");
    } else {
      std::printf("FAIL: unknown way of submitting work '%.*s'\n", static_cast<int>(way.size()), way.data());
      std::exit(2);
    }
  }
};

/// A non-blocking stream whose only work, submitted through `way`, uses the first owner's block
/// behind a gate on the legacy stream (the stream waits for an event recorded after the gate,
/// which is no work of the stream's own). The block is freed while that work is pending; the
/// one-block pool can only give the next owner the same block, so cudaMalloc must not return
/// before the gate opened and the work was done, and the new owner's write must be what remains.
int work_through(std::string_view way)
{
  cudaStream_t stream{};
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  void* first = nullptr;
  check(cudaMalloc(&first, block_size), "cudaMalloc (first owner)");
  prepared_work work{way, first};
  work.prepare();
  gate held;
  held.hold(nullptr);
  cudaEvent_t after_gate{};
  check(cudaEventCreateWithFlags(&after_gate, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  check(cudaEventRecord(after_gate, nullptr), "cudaEventRecord");
  check(cudaStreamWaitEvent(stream, after_gate, 0), "cudaStreamWaitEvent");
  work.submit(stream);
  auto opener  = open_later(held);
  void* second = next_owner_of(first);
  std::printf("malloc_waited_for_the_work=%d\n", held.open.load() ? 1 : 0);
  check(cudaMemset(second, 0x55, block_size), "cudaMemset (second owner)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  opener.join();
  std::printf("second_owner_sees=%s\n", ends_of(second, block_size).c_str());
  check(cudaFree(second), "cudaFree");
  check(cudaEventDestroy(after_gate), "cudaEventDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}

/// The program is handed an entry point that submits work, which the shim does not wrap (the
/// 32-bit ABI of cuMemcpyHtoDAsync): beside idle non-blocking streams, frees go through epochs again.
int unwatched_entry_point()
{
  void* old_abi = nullptr;
  CUdriverProcAddressQueryResult found{};
  check(cuGetProcAddress("cuMemcpyHtoDAsync", &old_abi, 2000, CU_GET_PROC_ADDRESS_DEFAULT, &found),
        "cuGetProcAddress (cuMemcpyHtoDAsync, 2000)");
  std::printf("old_abi_found=%d\n", found == CU_GET_PROC_ADDRESS_SUCCESS && old_abi != nullptr ? 1 : 0);
  std::vector<cudaStream_t> streams(4);
  for (auto& s : streams) {
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }
  for (int pair = 0; pair < 64; ++pair) {
    void* p = nullptr;
    check(cudaMalloc(&p, 4096), "cudaMalloc");
    check(cudaFree(p), "cudaFree");
  }
  for (auto s : streams) { check(cudaStreamDestroy(s), "cudaStreamDestroy"); }
  return 0;
}

/// Asks the driver's resolver for every entry point NVIDIA's runtime asks for when it starts (the
/// list recorded on a GPU host, RMM_TEST_LOOKUPS), old ABIs included, then frees beside idle
/// non-blocking streams: none of those answers may end the watch of the streams.
int lookups_of_the_runtime()
{
  char const* list = std::getenv("RMM_TEST_LOOKUPS");
  std::FILE* f     = list != nullptr ? std::fopen(list, "r") : nullptr;
  if (f == nullptr) {
    std::printf("FAIL: RMM_TEST_LOOKUPS names no readable file\n");
    return 1;
  }
  char line[512];
  int asked = 0;
  int found = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    char name[256];
    int version              = 0;
    unsigned long long flags = 0;
    if (std::sscanf(line, "getproc %255s %d %llu", name, &version, &flags) != 3) { continue; }
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status{};
    ++asked;
    if (cuGetProcAddress(name, &fn, version, flags, &status) == CUDA_SUCCESS && fn != nullptr) { ++found; }
  }
  std::fclose(f);
  std::printf("asked=%d\nfound=%d\n", asked, found);
  std::vector<cudaStream_t> streams(4);
  for (auto& s : streams) {
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }
  for (int pair = 0; pair < 64; ++pair) {
    void* p = nullptr;
    check(cudaMalloc(&p, 4096), "cudaMalloc");
    check(cudaFree(p), "cudaFree");
  }
  for (auto s : streams) { check(cudaStreamDestroy(s), "cudaStreamDestroy"); }
  return 0;
}

/// A stream used after the program destroyed it, where the driver checks handles (the emulator; a
/// real driver may crash instead): the calls fail, and the block stays allocated.
int destroyed_stream()
{
  cudaStream_t gone{};
  check(cudaStreamCreateWithFlags(&gone, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (third stream)");
  check(cudaStreamDestroy(gone), "cudaStreamDestroy (third stream)");
  void* on_gone = nullptr;
  std::printf("malloc_on_destroyed_stream=%s\n", cudaGetErrorName(cudaMallocAsync(&on_gone, 256, gone)));
  void* kept = nullptr;
  check(cudaMalloc(&kept, 256), "cudaMalloc (to be freed on the destroyed stream)");
  std::printf("free_on_destroyed_stream=%s\n", cudaGetErrorName(cudaFreeAsync(kept, gone)));
  std::printf("free_after_that=%s\n", cudaGetErrorName(cudaFree(kept)));
  return 0;
}

/// The program captures a blocking stream and meanwhile allocates and frees far more blocks than an
/// epoch holds: first with only blocking streams (frees in the legacy stream's order), then with a
/// non-blocking stream too (frees in epochs). Work on the legacy stream while a blocking stream
/// captures would invalidate the capture, so the shim must leave that stream alone until it ends.
/// Begins a capture of `stream` through the runtime, or, with RMM_TEST_CAPTURE_ABI=10000, through
/// the driver's first ABI of cuStreamBeginCapture (no mode: a global capture).
cudaError_t begin_capture(cudaStream_t stream)
{
  char const* abi = std::getenv("RMM_TEST_CAPTURE_ABI");
  if (abi == nullptr) { return cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed); }
  using first_abi = CUresult (*)(CUstream);
  void* fn        = nullptr;
  CUdriverProcAddressQueryResult found{};
  if (cuGetProcAddress("cuStreamBeginCapture", &fn, std::atoi(abi), CU_GET_PROC_ADDRESS_DEFAULT, &found) !=
        CUDA_SUCCESS ||
      fn == nullptr) {
    return cudaErrorSymbolNotFound;
  }
  return reinterpret_cast<first_abi>(fn)(stream) == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

int capture_of_a_blocking_stream()
{
  cudaStream_t captured{};
  check(cudaStreamCreate(&captured), "cudaStreamCreate");
  cudaStream_t side{};
  for (int round = 0; round < 2; ++round) {
    if (round == 1) { check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
    check(begin_capture(captured), "cudaStreamBeginCapture");
    for (int i = 0; i < 200; ++i) {
      void* p = nullptr;
      check(cudaMalloc(&p, 4096), "cudaMalloc (while capturing)");
      check(cudaFree(p), "cudaFree (while capturing)");
    }
    cudaGraph_t graph{};
    auto const ended = cudaStreamEndCapture(captured, &graph);
    std::printf("capture_%d=%s\n", round, cudaGetErrorName(ended));
    if (ended == cudaSuccess) { (void)cudaGraphDestroy(graph); }
  }
  // After the capture, the frees made during it are given back and reused.
  for (int i = 0; i < 200; ++i) {
    void* p = nullptr;
    check(cudaMalloc(&p, 4096), "cudaMalloc (after the capture)");
    check(cudaFree(p), "cudaFree (after the capture)");
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaStreamDestroy(side), "cudaStreamDestroy");
  check(cudaStreamDestroy(captured), "cudaStreamDestroy");
  return 0;
}

}  // namespace

int main(int argc, char** argv)
{
  std::string_view const scenario = argc > 1 ? argv[1] : "";
  int result                      = 0;
  // A library the test names, loaded first: how a test makes this program look like another one
  // (a copy of libm named like XLA's extension) to a shim that asks what the process loaded.
  if (char const* library = std::getenv("SHIM_CLIENT_LOAD");
      library != nullptr && dlopen(library, RTLD_NOW) == nullptr) {
    std::printf("FAIL: dlopen %s: %s\n", library, dlerror());
    return 2;
  }
  if (scenario == "runtime-pairs") {
    result = runtime_pairs();
  } else if (scenario == "null-and-foreign") {
    result = null_and_foreign();
  } else if (scenario == "driver-symbols") {
    result = driver_symbols();
  } else if (scenario == "driver-lookup") {
    result = driver_lookup();
  } else if (scenario == "stream-ordered") {
    result = stream_ordered();
  } else if (scenario == "out-of-memory") {
    result = out_of_memory();
  } else if (scenario == "many-threads") {
    result = many_threads();
  } else if (scenario == "fork") {
    result = fork_child();
  } else if (scenario == "kept-blocks") {
    result = kept_blocks();
  } else if (scenario == "free-at-thread-exit") {
    result = free_at_thread_exit();
  } else if (scenario == "first-call-in-key-destructor") {
    result = first_call_in_key_destructor();
  } else if (scenario == "default-pool") {
    result = default_pool();
  } else if (scenario == "passed-by") {
    result = passed_by();
  } else if (scenario == "free-in-last-destructor-round") {
    result = free_in_last_destructor_round();
  } else if (scenario == "limit-with-waiting-frees") {
    result = limit_with_waiting_frees();
  } else if (scenario == "growth-while-frees-wait") {
    result = growth_while_frees_wait();
  } else if (scenario == "reset-gives-memory-back") {
    result = reset_gives_memory_back();
  } else if (scenario == "two-device-pairs") {
    result = two_device_pairs();
  } else if (scenario == "fork-then-allocate") {
    result = fork_then_allocate();
  } else if (scenario == "two-devices") {
    result = two_devices();
  } else if (scenario == "kept-blocks-of-other-threads") {
    result = kept_blocks_of_other_threads();
  } else if (scenario == "memory-info") {
    result = memory_info();
  } else if (scenario == "premature-reuse") {
    result = premature_reuse();
  } else if (scenario == "legacy-order-reuse") {
    result = legacy_order_reuse();
  } else if (scenario == "new-stream-after-legacy-reuse") {
    result = new_stream_after_legacy_reuse();
  } else if (scenario == "destroyed-stream-still-writing") {
    result = destroyed_stream_still_writing();
  } else if (scenario == "oldest-epoch-first") {
    result = oldest_epoch_first();
  } else if (scenario == "epochs-beside-streams") {
    result = epochs_beside_streams();
  } else if (scenario == "fenced-reuse") {
    result = fenced_reuse();
  } else if (scenario == "stream-ordered-free-then-malloc") {
    result = stream_ordered_free_then_malloc();
  } else if (scenario == "work-through") {
    char const* way = std::getenv("RMM_TEST_WAY");  // how the work is submitted (prepared_work)
    result          = work_through(way != nullptr ? way : "");
  } else if (scenario == "unwatched-entry-point") {
    result = unwatched_entry_point();
  } else if (scenario == "lookups-of-the-runtime") {
    result = lookups_of_the_runtime();
  } else if (scenario == "reused-stream-handle") {
    result = reused_stream_handle();
  } else if (scenario == "destroyed-stream") {
    result = destroyed_stream();
  } else if (scenario == "capture") {
    result = capture_of_a_blocking_stream();
  } else if (scenario == "live-at-exit") {
    result = live_at_exit();
  } else {
    std::printf("FAIL: unknown scenario '%s'\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  if (argc > 2) { print_report_json(argv[2]); }
  std::fflush(stdout);
  return result != 0 ? result : (failures == 0 ? 0 : 1);
}
