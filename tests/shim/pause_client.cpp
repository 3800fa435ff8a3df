// SPDX-License-Identifier: Apache-2.0
// A CUDA program the pause tests run under the shim. It pauses its device memory itself
// (rmm_shim_pause) or has rmm-ctl do it from another process, and prints what it saw as
// `key=value` lines; a failed expectation prints `FAIL: ...` and makes the exit status non-zero.

#include "client_checks.hpp"

#include <rmm/shim.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <dirent.h>
#include <dlfcn.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace rmm::test::client;

/// The shim's control functions (the shim is preloaded).
struct shim_functions {
  int (*pause)(unsigned int)       = nullptr;
  int (*resume)()                  = nullptr;
  char const* (*message)()         = nullptr;
  int (*print_report)(char const*) = nullptr;
};

shim_functions shim()
{
  shim_functions f;
  f.pause        = reinterpret_cast<int (*)(unsigned int)>(dlsym(RTLD_DEFAULT, "rmm_shim_pause"));
  f.resume       = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "rmm_shim_resume"));
  f.message      = reinterpret_cast<char const* (*)()>(dlsym(RTLD_DEFAULT, "rmm_shim_last_message"));
  f.print_report = reinterpret_cast<int (*)(char const*)>(dlsym(RTLD_DEFAULT, "rmm_shim_print_report"));
  if (f.pause == nullptr || f.resume == nullptr || f.message == nullptr || f.print_report == nullptr) {
    std::printf("FAIL: the shim's pause functions are not exported\n");
    std::exit(2);
  }
  return f;
}

/// A device block and what was written to it.
struct block {
  void* ptr{nullptr};
  std::vector<unsigned char> contents;
};

std::vector<block> write_blocks(int count, std::uint32_t seed)
{
  std::mt19937 random{seed};
  std::vector<block> blocks;
  for (int i = 0; i < count; ++i) {
    block b;
    b.contents.resize((1 + random() % 4096) * 256);
    for (auto& byte : b.contents) { byte = static_cast<unsigned char>(random()); }
    check(cudaMalloc(&b.ptr, b.contents.size()), "cudaMalloc");
    check(cudaMemcpy(b.ptr, b.contents.data(), b.contents.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
    blocks.push_back(std::move(b));
  }
  return blocks;
}

bool all_hold(std::vector<block> const& blocks)
{
  for (auto const& b : blocks) {
    std::vector<unsigned char> now(b.contents.size());
    if (cudaMemcpy(now.data(), b.ptr, now.size(), cudaMemcpyDeviceToHost) != cudaSuccess || now != b.contents) {
      return false;
    }
  }
  return true;
}

void free_all(std::vector<block> const& blocks)
{
  for (auto const& b : blocks) { check(cudaFree(b.ptr), "cudaFree"); }
}

/// The free memory once the context exists and before anything was allocated.
std::size_t baseline()
{
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaFree(nullptr), "cudaFree(nullptr)");
  return free_bytes();
}

/// The pause from inside: memory given back, allocations waiting, frees held, contents restored.
int in_process()
{
  auto const f     = shim();
  auto const start = baseline();
  auto blocks      = write_blocks(24, 5);
  // Free every third block before the pause: its memory is free, not copied.
  std::vector<block> kept;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (i % 3 == 0) {
      check(cudaFree(blocks[i].ptr), "cudaFree");
    } else {
      kept.push_back(blocks[i]);
    }
  }
  auto const before = free_bytes();
  int const paused  = f.pause(0);
  std::printf("pause=%d\npause_message=%s\n", paused, f.message());
  auto const while_paused = free_bytes();
  std::printf("free_at_start=%zu\nfree_before_pause=%zu\nfree_while_paused=%zu\n", start, before, while_paused);
  expect(paused == 0, "the pause succeeds");
  expect(while_paused == start, "while paused the device has all the memory the stack held");
  int const again = f.pause(0);  // the message is read after the call, never before
  std::printf("pause_again=%d\npause_again_message=%s\n", again, f.message());

  // An allocation on another thread waits for the resume; a free here is held, and returns at once.
  std::atomic<int> allocated{0};
  void* waited = nullptr;
  std::thread allocator{[&] {
    auto const r = cudaMalloc(&waited, 1 << 20);
    allocated.store(r == cudaSuccess ? 1 : -1);
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  std::printf("allocated_while_paused=%d\n", allocated.load());
  auto const held = kept.back();
  kept.pop_back();
  check(cudaFree(held.ptr), "cudaFree while paused");
  std::printf("report_while_paused=%d\n", f.print_report(std::getenv("RMM_TEST_PAUSED_REPORT")));

  int const resumed = f.resume();
  std::printf("resume=%d\nresume_message=%s\n", resumed, f.message());
  allocator.join();
  std::printf("allocated_after_resume=%d\n", allocated.load());
  std::printf("contents_kept=%d\n", all_hold(kept) ? 1 : 0);
  int const resumed_again = f.resume();
  std::printf("resume_again=%d\nresume_again_message=%s\n", resumed_again, f.message());
  expect(resumed == 0, "the resume succeeds");
  if (waited != nullptr) { check(cudaFree(waited), "cudaFree"); }
  free_all(kept);
  return failures == 0 ? 0 : 1;
}

/// An allocation made while paused fails once the pause timeout has passed.
int timeout()
{
  auto const f = shim();
  (void)baseline();
  auto const blocks = write_blocks(2, 9);
  expect(f.pause(0) == 0, "the pause succeeds");
  void* ptr        = nullptr;
  auto const start = std::chrono::steady_clock::now();
  auto const r     = cudaMalloc(&ptr, 4096);
  auto const ms    = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("allocation=%s\nwaited_ms=%.0f\n", cudaGetErrorName(r), ms);
  (void)cudaGetLastError();
  expect(f.resume() == 0, "the resume succeeds");
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// With the contents discarded, the blocks keep their addresses and work, their bytes gone.
int discard()
{
  auto const f      = shim();
  auto const start  = baseline();
  auto const blocks = write_blocks(4, 3);
  expect(f.pause(RMM_SHIM_PAUSE_DISCARD) == 0, "the pause succeeds");
  std::printf("pause_message=%s\n", f.message());
  std::printf("memory_given_back=%d\n", free_bytes() == start ? 1 : 0);
  expect(f.resume() == 0, "the resume succeeds");
  auto again = blocks;
  std::mt19937 random{17};
  for (auto& b : again) {
    for (auto& byte : b.contents) { byte = static_cast<unsigned char>(random()); }
    check(cudaMemcpy(b.ptr, b.contents.data(), b.contents.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  std::printf("usable_after_resume=%d\n", all_hold(again) ? 1 : 0);
  int const unknown = f.pause(4);
  std::printf("unknown_flag=%d\nunknown_flag_message=%s\n", unknown, f.message());
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// A resume the device cannot serve (another user took the memory) changes nothing; once the
/// memory is back, the next resume restores everything.
int resume_fails()
{
  auto const f = shim();
  (void)baseline();
  auto const blocks = write_blocks(16, 21);
  expect(f.pause(0) == 0, "the pause succeeds");
  // Memory the program maps itself passes the shim by: it takes all but about 1 MiB of the device,
  // in pieces (one allocation of all of an H200's free memory fails where pieces do not).
  CUmemAllocationProp prop{};
  prop.type               = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type      = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id        = 0;
  std::size_t granularity = 0;
  expect(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS,
         "the granularity");
  constexpr std::size_t piece = std::size_t{1} << 30;
  auto const left_free        = (std::size_t{1} << 20) + granularity;
  std::vector<CUmemGenericAllocationHandle> taken;
  for (auto free = free_bytes(); free > left_free; free = free_bytes()) {
    auto const size = std::min(piece, (free - (std::size_t{1} << 20)) / granularity * granularity);
    CUmemGenericAllocationHandle handle{};
    if (cuMemCreate(&handle, size, &prop, 0) != CUDA_SUCCESS) { break; }
    taken.push_back(handle);
  }
  expect(free_bytes() <= left_free, "another user takes the memory");
  int const failed = f.resume();
  std::printf("resume_without_memory=%d\nresume_without_memory_message=%s\n", failed, f.message());
  std::printf(
    "still_paused=%d\n",
    f.pause(0) != 0 && std::string_view{f.message()}.find("paused already") != std::string_view::npos ? 1 : 0);
  for (auto const handle : taken) { expect(cuMemRelease(handle) == CUDA_SUCCESS, "the other user gives it back"); }
  int const resumed = f.resume();
  std::printf("resume_with_memory=%d\nresume_with_memory_message=%s\n", resumed, f.message());
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// A stack that cannot pause says why, and stays as it was.
int not_pausable()
{
  auto const f = shim();
  (void)baseline();
  auto const blocks = write_blocks(2, 1);
  int const paused  = f.pause(0);
  std::printf("pause=%d\npause_message=%s\n", paused, f.message());
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  void* more = nullptr;
  std::printf("allocation_after=%s\n", cudaGetErrorName(cudaMalloc(&more, 4096)));
  if (more != nullptr) { check(cudaFree(more), "cudaFree"); }
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// Threads allocating and freeing without pause while the process is paused and resumed again and
/// again: none of their calls slips into a paused stack (the device keeps all its memory while
/// paused), and the blocks that live throughout keep their contents.
int under_load()
{
  auto const f      = shim();
  auto const start  = baseline();
  auto const blocks = write_blocks(8, 31);
  std::atomic<bool> stop{false};
  std::atomic<long> calls{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 8; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 random{static_cast<std::uint32_t>(t)};
      while (!stop.load()) {
        void* ptr = nullptr;
        if (cudaMalloc(&ptr, (1 + random() % 512) * 1024) == cudaSuccess) {
          (void)cudaFree(ptr);
          calls.fetch_add(2);
        }
      }
    });
  }
  int rounds_with_all_memory = 0;
  int const rounds           = 40;
  for (int round = 0; round < rounds; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
    expect(f.pause(0) == 0, "each pause succeeds");
    if (free_bytes() == start) { ++rounds_with_all_memory; }
    expect(f.resume() == 0, "each resume succeeds");
  }
  stop.store(true);
  for (auto& w : workers) { w.join(); }
  std::printf("rounds=%d\nrounds_with_all_memory=%d\nworker_calls=%ld\n", rounds, rounds_with_all_memory, calls.load());
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// A stream capturing a graph: the pause is refused, changing nothing, and goes ahead once the
/// capture is over.
int refuse_capture()
{
  auto const f = shim();
  (void)baseline();
  auto const blocks = write_blocks(6, 41);
  cudaStream_t stream{};
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
  int const capturing = f.pause(0);
  std::printf("pause_capturing=%d\npause_capturing_message=%s\n", capturing, f.message());
  cudaGraph_t graph{};
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  (void)cudaGraphDestroy(graph);  // not emulated; the graph holds nothing of the shim's
  std::printf("contents_after_refusal=%d\n", all_hold(blocks) ? 1 : 0);
  int const after_capture = f.pause(0);
  std::printf("pause_after_capture=%d\n", after_capture);
  expect(after_capture != 0 || f.resume() == 0, "the resume succeeds");
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// A block exported to other processes through CUDA IPC: the pause is refused, changing nothing,
/// and goes ahead once the block is freed (nobody opened it).
int refuse_export()
{
  auto const f      = shim();
  auto const start  = baseline();
  auto const blocks = write_blocks(6, 43);
  void* exported    = nullptr;
  check(cudaMalloc(&exported, 1 << 20), "cudaMalloc");
  CUipcMemHandle handle{};
  auto const export_result = cuIpcGetMemHandle(&handle, reinterpret_cast<CUdeviceptr>(exported));
  if (export_result != CUDA_SUCCESS) {
    std::printf("FAIL: cuIpcGetMemHandle returned %d\n", static_cast<int>(export_result));
    return 2;
  }
  int const while_exported = f.pause(0);
  std::printf("pause_exported=%d\npause_exported_message=%s\n", while_exported, f.message());
  void* more = nullptr;
  std::printf("allocation_after_refusal=%s\n", cudaGetErrorName(cudaMalloc(&more, 4096)));
  if (more != nullptr) { check(cudaFree(more), "cudaFree"); }
  check(cudaFree(exported), "cudaFree");  // nobody opened it: its handle opens nothing any more
  int const after_free = f.pause(0);
  std::printf("pause_after_free=%d\nfree_while_paused_is_start=%d\n", after_free, free_bytes() == start ? 1 : 0);
  expect(after_free != 0 || f.resume() == 0, "the resume succeeds");
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// Stream-ordered calls while paused: cudaMallocAsync waits for the resume, cudaFreeAsync is held
/// and applied then.
int stream_ordered()
{
  auto const f = shim();
  (void)baseline();
  cudaMemPool_t pool{};
  check(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
  auto const pool_attribute = [pool](cudaMemPoolAttr attribute) {
    std::uint64_t value = 0;
    check(cudaMemPoolGetAttribute(pool, attribute, &value), "cudaMemPoolGetAttribute");
    return value;
  };
  auto const reserved_before = pool_attribute(cudaMemPoolAttrReservedMemCurrent);
  auto const used_before     = pool_attribute(cudaMemPoolAttrUsedMemCurrent);
  cudaStream_t stream{};
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  std::vector<unsigned char> contents(1 << 20);
  for (std::size_t i = 0; i < contents.size(); ++i) { contents[i] = static_cast<unsigned char>(i * 7); }
  void* kept  = nullptr;
  void* freed = nullptr;
  check(cudaMallocAsync(&kept, contents.size(), stream), "cudaMallocAsync");
  check(cudaMallocAsync(&freed, 1 << 20, stream), "cudaMallocAsync");
  check(cudaMemcpyAsync(kept, contents.data(), contents.size(), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::printf("pool_reserved_grew=%d\n", pool_attribute(cudaMemPoolAttrReservedMemCurrent) > reserved_before ? 1 : 0);
  expect(f.pause(0) == 0, "the pause succeeds");
  // The default pool's figures say what cudaMemGetInfo says: the paused memory is the device's.
  std::printf("pool_reserved_paused_is_before=%d\n",
              pool_attribute(cudaMemPoolAttrReservedMemCurrent) == reserved_before ? 1 : 0);
  std::printf("pool_used_paused_is_before=%d\n", pool_attribute(cudaMemPoolAttrUsedMemCurrent) == used_before ? 1 : 0);
  std::atomic<int> allocated{0};
  void* waited = nullptr;
  std::thread allocator{[&] {
    auto const r = cudaMallocAsync(&waited, 4096, stream);
    allocated.store(r == cudaSuccess ? 1 : -1);
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  std::printf("allocated_while_paused=%d\n", allocated.load());
  std::printf("free_async_while_paused=%s\n", cudaGetErrorName(cudaFreeAsync(freed, stream)));
  int const resumed = f.resume();
  std::printf("resume=%d\nresume_message=%s\n", resumed, f.message());
  allocator.join();
  std::printf("allocated_after_resume=%d\n", allocated.load());
  std::vector<unsigned char> now(contents.size());
  check(cudaMemcpyAsync(now.data(), kept, now.size(), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::printf("contents_kept=%d\n", now == contents ? 1 : 0);
  if (waited != nullptr) { check(cudaFreeAsync(waited, stream), "cudaFreeAsync"); }
  check(cudaFreeAsync(kept, stream), "cudaFreeAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return failures == 0 ? 0 : 1;
}

/// A device reset while paused ends the pause of that device: its memory and the frees held for
/// it are gone, the resume has nothing left to restore, and the device serves again.
int reset_while_paused()
{
  auto const f      = shim();
  auto const start  = baseline();
  auto const blocks = write_blocks(4, 23);
  expect(f.pause(0) == 0, "the pause succeeds");
  check(cudaFree(blocks[0].ptr), "cudaFree while paused");  // held for the resume
  std::printf("reset=%s\n", cudaGetErrorName(cudaDeviceReset()));
  int const resumed = f.resume();
  std::printf("resume=%d\nresume_message=%s\n", resumed, f.message());
  check(cudaFree(nullptr), "cudaFree(nullptr)");
  auto const fresh = write_blocks(4, 29);
  std::printf("usable_after_reset=%d\n", all_hold(fresh) ? 1 : 0);
  free_all(fresh);
  std::printf("free_at_start=%zu\nfree_at_end=%zu\n", start, free_bytes());
  return failures == 0 ? 0 : 1;
}

/// Contents larger than the host can hold: the pause is refused before it copies (never the
/// kernel's out-of-memory killer), and changes nothing; without contents to keep it goes ahead.
int host_memory()
{
  auto const f = shim();
  (void)baseline();
  auto const blocks = write_blocks(3, 37);
  // The test sizes the device at twice the host's available memory: three quarters of it is half
  // as much again as the host has.
  auto const bytes = (free_bytes() / 4 * 3) & ~((std::size_t{1} << 30) - 1);
  void* large      = nullptr;
  check(cudaMalloc(&large, bytes), "cudaMalloc of more than the host has");
  check(cudaMemset(large, 0x5a, 4096), "cudaMemset");
  int const paused = f.pause(0);
  std::printf("pause=%d\npause_message=%s\n", paused, f.message());
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  unsigned char first = 0;
  check(cudaMemcpy(&first, large, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::printf("large_block_kept=%d\n", first == 0x5a ? 1 : 0);
  int const discarded = f.pause(RMM_SHIM_PAUSE_DISCARD);
  std::printf("pause_discard=%d\n", discarded);
  expect(discarded != 0 || f.resume() == 0, "the resume after discarding succeeds");
  check(cudaFree(large), "cudaFree");
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// Overwrites every block with new contents (the pause after must copy these, not older ones).
void rewrite_blocks(std::vector<block>& blocks, std::uint32_t seed)
{
  std::mt19937 random{seed};
  for (auto& b : blocks) {
    for (auto& byte : b.contents) { byte = static_cast<unsigned char>(random()); }
    check(cudaMemcpy(b.ptr, b.contents.data(), b.contents.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
}

/// The host memory of one pause serves the next (held with pause_keeps_host_memory, else until the
/// system needs it), whose contents are newer; contents larger than it get new memory; rmm-ctl
/// release gives it back.
int keep_host_memory()
{
  auto const f = shim();
  (void)baseline();
  auto blocks = write_blocks(16, 9);
  expect(f.pause(0) == 0, "the first pause succeeds");
  expect(f.resume() == 0, "the first resume succeeds");
  std::printf("first_resume_message=%s\n", f.message());
  std::printf("report_after_resume=%d\n", f.print_report(std::getenv("RMM_TEST_PAUSED_REPORT")));
  rewrite_blocks(blocks, 10);
  expect(f.pause(0) == 0, "the second pause succeeds");
  expect(f.resume() == 0, "the second resume succeeds");
  std::printf("newer_contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  auto more = write_blocks(16, 11);  // more contents than the kept memory holds
  expect(f.pause(0) == 0, "the third pause succeeds");
  expect(f.resume() == 0, "the third resume succeeds");
  std::printf("third_resume_message=%s\n", f.message());
  std::printf("larger_contents_kept=%d\n", all_hold(blocks) && all_hold(more) ? 1 : 0);
  run_ctl("release", std::to_string(::getpid()) + " release");
  run_ctl("release_again", std::to_string(::getpid()) + " release");
  expect(f.pause(0) == 0, "a pause after the release succeeds");
  expect(f.resume() == 0, "its resume succeeds");
  std::printf("contents_kept_after_release=%d\n", all_hold(blocks) && all_hold(more) ? 1 : 0);
  free_all(blocks);
  free_all(more);
  return failures == 0 ? 0 : 1;
}

/// rmm-ctl, another process, pauses and resumes this one.
int from_outside()
{
  (void)baseline();
  auto const start  = free_bytes();
  auto const blocks = write_blocks(12, 13);
  auto const pid    = std::to_string(::getpid());
  run_ctl("list_running", "list");
  run_ctl("report", pid + " report");
  run_ctl("report_json", pid + " report --json");
  run_ctl("pause", pid + " pause");
  std::printf("memory_given_back=%d\n", free_bytes() == start ? 1 : 0);
  run_ctl("list_paused", "list");
  run_ctl("report_paused", pid + " report");
  run_ctl("pause_again", pid + " pause");
  run_ctl("release_paused", pid + " release");
  run_ctl("resume", pid + " resume");
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  run_ctl("resume_again", pid + " resume");
  run_ctl("release", pid + " release");
  run_ctl("bad_command", pid + " frobnicate");
  run_ctl("not_a_pid", "12ab report");
  run_ctl("pid_out_of_range", "4294967297 report");
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// rmm-ctl asks, from another process, while rmm-ctl pauses this one slowly (the emulator's
/// streams delayed): a question and a release are answered during the pause.
int ask_while_pausing()
{
  (void)baseline();
  auto const blocks = write_blocks(4, 17);
  void* large       = nullptr;
  check(cudaMalloc(&large, std::size_t{64} << 20), "cudaMalloc (64 MiB of contents)");
  auto const pid = std::to_string(::getpid());
  using clock    = std::chrono::steady_clock;
  std::atomic<bool> paused{false};
  auto const start = clock::now();
  std::thread pauser{[&] {
    run_ctl("pause", pid + " pause");
    paused.store(true);
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  run_ctl("list_pausing", "list");
  auto const listed = clock::now();
  std::printf("list_during_pause=%d\n", paused.load() ? 0 : 1);
  run_ctl("report_pausing", pid + " report");
  std::printf("report_during_pause=%d\n", paused.load() ? 0 : 1);
  run_ctl("release_pausing", pid + " release");
  std::printf("release_during_pause=%d\n", paused.load() ? 0 : 1);
  pauser.join();
  auto const ms = [&](clock::time_point t) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(t - start).count());
  };
  std::printf("listed_ms=%lld\npaused_ms=%lld\n", ms(listed), ms(clock::now()));
  run_ctl("resume", pid + " resume");
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  check(cudaFree(large), "cudaFree");
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// This process's control socket.
std::string own_socket()
{
  char const* runtime = std::getenv("XDG_RUNTIME_DIR");
  return std::string{runtime != nullptr ? runtime : ""} + "/rmm/" + std::to_string(::getpid()) + ".sock";
}

/// Sends `request` as it is to the socket at `path` (this process's by default); returns the answer.
std::string send_raw(std::string const& request, std::string const& path = own_socket())
{
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), std::min(path.size() + 1, sizeof(address.sun_path) - 1));
  int const fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr const*>(&address), sizeof(address)) != 0) {
    if (fd >= 0) { ::close(fd); }
    return std::string{"connect: "} + std::strerror(errno);
  }
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char chunk[512];
  for (ssize_t n = 0; (n = ::recv(fd, chunk, sizeof chunk, 0)) > 0;) {
    answer.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  for (auto& c : answer) {
    if (c == '\n') { c = '|'; }
  }
  return answer;
}

/// Connects to the socket at `path`, sends `request` and leaves its own end open for writing (as
/// rmm-ctl does), then reads the answer to the end; says how the connection ended: `eof`, or
/// `reset` when the shim closed it with input of ours unread.
std::string send_and_read_strictly(std::string const& request, std::string const& path = own_socket())
{
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), std::min(path.size() + 1, sizeof(address.sun_path) - 1));
  int const fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr const*>(&address), sizeof(address)) != 0) {
    if (fd >= 0) { ::close(fd); }
    return std::string{"connect: "} + std::strerror(errno);
  }
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char chunk[512];
  ssize_t n = 0;
  while ((n = ::recv(fd, chunk, sizeof chunk, 0)) > 0) { answer.append(chunk, static_cast<std::size_t>(n)); }
  ::close(fd);
  for (auto& c : answer) {
    if (c == '\n') { c = '|'; }
  }
  return answer + (n == 0 ? "end=eof" : std::string{"end="} + (errno == ECONNRESET ? "reset" : std::strerror(errno)));
}

/// Bad requests get an error and change nothing; another user is kept out by the socket's mode,
/// and, where the mode is loosened, by the check of the peer's credentials.
int bad_requests()
{
  auto const f = shim();
  (void)baseline();
  auto const blocks = write_blocks(3, 8);
  std::printf("oversized=%s\n", send_raw(std::string(4096, 'p')).c_str());
  std::printf("oversized_strict=%s\n", send_and_read_strictly(std::string(4096, 'p')).c_str());
  std::printf("unknown=%s\n", send_raw("pause now\n").c_str());
  std::printf("two_requests=%s\n", send_raw("pause\nresume\n").c_str());
  std::printf("no_newline=%s\n", send_raw("pause").c_str());
  std::printf("binary=%s\n", send_raw(std::string("\x01\x02\xff\n", 4)).c_str());
  std::printf("still_running=%d\n", f.resume() != 0 ? 1 : 0);  // "not paused": nothing above paused it
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);

  if (::geteuid() == 0) {
    // Another user, as root can become one: the directory's mode keeps it out.
    auto const as_nobody = [socket = own_socket()](char const* name) {
      std::fflush(stdout);
      pid_t const child = ::fork();
      if (child == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) { _exit(3); }
        std::printf("%s=%s\n", name, send_raw("report\n", socket).c_str());
        std::fflush(stdout);
        _exit(0);
      }
      int status = 0;
      ::waitpid(child, &status, 0);
    };
    as_nobody("other_user");
    // Loosened all the way down (the runtime directory, its rmm directory, the socket), the peer's
    // credentials still keep it out.
    auto const dir     = own_socket().substr(0, own_socket().rfind('/'));
    auto const runtime = dir.substr(0, dir.rfind('/'));
    expect(::chmod(runtime.c_str(), 0777) == 0 && ::chmod(dir.c_str(), 0777) == 0 &&
             ::chmod(own_socket().c_str(), 0777) == 0,
           "the modes are loosened");
    as_nobody("other_user_loosened");
    std::fflush(stdout);
    auto const socket = own_socket();
    if (pid_t const child = ::fork(); child == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) { _exit(3); }
      std::printf("other_user_strict=%s\n", send_and_read_strictly("report\n", socket).c_str());
      std::fflush(stdout);
      _exit(0);
    } else {
      ::waitpid(child, nullptr, 0);
    }
    expect(::chmod(own_socket().c_str(), 0600) == 0 && ::chmod(dir.c_str(), 0700) == 0 &&
             ::chmod(runtime.c_str(), 0700) == 0,
           "the modes are restored");
  }
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// A connection of this process's own that sends nothing.
int idle_connection(std::string const& path = own_socket())
{
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), std::min(path.size() + 1, sizeof(address.sun_path) - 1));
  int const fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr const*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

long long milliseconds_since(std::chrono::steady_clock::time_point start)
{
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

/// Idle and slow clients of this user's delay nobody, and a slow one meets its deadline on time.
int slow_clients()
{
  (void)baseline();
  auto const blocks = write_blocks(2, 21);
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) { idle.push_back(idle_connection()); }
  auto const pid   = std::to_string(::getpid());
  auto const start = std::chrono::steady_clock::now();
  run_ctl("report_beside_idle", pid + " report");
  std::printf("report_beside_idle_ms=%lld\n", milliseconds_since(start));
  // A byte every 4 s: the request's 5 s run out between two of them.
  std::string trickled;
  std::thread trickle{[&trickled] {
    int const fd     = idle_connection();
    auto const begin = std::chrono::steady_clock::now();
    for (int i = 0; i < 4; ++i) {
      if (::send(fd, "p", 1, MSG_NOSIGNAL) != 1) { break; }
      pollfd ready{fd, POLLIN, 0};
      if (::poll(&ready, 1, 4000) > 0) { break; }  // answered
    }
    char chunk[256];
    auto const n = ::recv(fd, chunk, sizeof chunk, 0);
    trickled     = n > 0 ? std::string(chunk, static_cast<std::size_t>(n)) : std::string{};
    std::printf("trickle_answered_ms=%lld\n", milliseconds_since(begin));
    ::close(fd);
  }};
  trickle.join();
  for (auto& c : trickled) {
    if (c == '\n') { c = '|'; }
  }
  std::printf("trickle_answer=%s\n", trickled.c_str());
  for (int fd : idle) {
    if (fd >= 0) { ::close(fd); }
  }
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// rmm-ctl list removes only the sockets of processes that are gone: not that of a process that
/// has bound its socket and does not listen yet, and this process's own socket is listed under
/// its name only once it listens.
int list_keeps_starting()
{
  (void)baseline();
  auto const blocks   = write_blocks(1, 25);  // the first stack starts the control socket
  auto const dir      = own_socket().substr(0, own_socket().rfind('/'));
  pid_t const sleeper = ::fork();
  if (sleeper == 0) {
    ::pause();
    _exit(0);
  }
  auto const starting = dir + "/" + std::to_string(sleeper) + ".sock";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, starting.c_str(), starting.size() + 1);
  int const bound = ::socket(AF_UNIX, SOCK_STREAM, 0);
  expect(::bind(bound, reinterpret_cast<sockaddr const*>(&address), sizeof(address)) == 0, "bind (not listening)");
  run_ctl("list_while_starting", "list");
  struct stat info {};
  std::printf("starting_socket_kept=%d\n", ::stat(starting.c_str(), &info) == 0 ? 1 : 0);
  ::kill(sleeper, SIGKILL);
  ::waitpid(sleeper, nullptr, 0);
  run_ctl("list_after_exit", "list");
  std::printf("stale_socket_removed=%d\n", ::stat(starting.c_str(), &info) != 0 ? 1 : 0);
  ::close(bound);
  bool leftover = false;
  if (DIR* listing = ::opendir(dir.c_str())) {
    while (auto const* entry = ::readdir(listing)) {
      leftover = leftover || std::string_view{entry->d_name}.ends_with(".starting");
    }
    ::closedir(listing);
  }
  std::printf("no_starting_name_left=%d\n", leftover ? 0 : 1);
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// A process that exits while rmm-ctl pauses it: rmm-ctl says so.
int exit_while_pausing()
{
  auto* ready = static_cast<std::atomic<int>*>(
    mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (ready) std::atomic<int>{0};
  std::fflush(stdout);
  pid_t const target = ::fork();  // before CUDA starts here
  if (target == 0) {
    (void)baseline();
    void* large = nullptr;
    check(cudaMalloc(&large, std::size_t{64} << 20), "cudaMalloc (64 MiB of contents)");
    auto const blocks = write_blocks(2, 23);
    ready->store(1);
    ::pause();
    _exit(0);
  }
  while (ready->load() == 0) { std::this_thread::sleep_for(std::chrono::milliseconds{5}); }
  std::thread killer{[target] {
    std::this_thread::sleep_for(std::chrono::milliseconds{400});
    ::kill(target, SIGKILL);
  }};
  run_ctl("pause_of_exiting", std::to_string(target) + " pause");
  killer.join();
  ::waitpid(target, nullptr, 0);
  return failures == 0 ? 0 : 1;
}

/// A pause stuck behind device work (a host function that does not return) gives up after
/// pause_device_wait, pausing nothing, while an allocation waits and is then served; a resume
/// cancels such a pause at once.
int stuck_device()
{
  auto const f = shim();
  (void)baseline();
  auto const blocks = write_blocks(4, 27);
  cudaStream_t stream{};
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  static std::atomic<bool> released{false};
  check(cudaLaunchHostFunc(
          stream,
          [](void*) {
            while (!released.load()) { std::this_thread::sleep_for(std::chrono::milliseconds{5}); }
          },
          nullptr),
        "cudaLaunchHostFunc");
  // Cancelled by a resume, from another thread, while it waits.
  std::atomic<long long> cancel_ms{-1};
  std::string cancelled_message;
  int cancelled_pause = 0;
  auto start          = std::chrono::steady_clock::now();
  std::thread pauser{[&] {
    cancelled_pause   = f.pause(0);
    cancelled_message = f.message();
    cancel_ms.store(milliseconds_since(start));
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  int const resumed = f.resume();
  std::printf("resume_while_pausing=%d\nresume_while_pausing_message=%s\n", resumed, f.message());
  std::printf("resume_while_pausing_ms=%lld\n", milliseconds_since(start));
  pauser.join();
  std::printf("cancelled_pause=%d\ncancelled_pause_message=%s\ncancelled_pause_ms=%lld\n", cancelled_pause,
              cancelled_message.c_str(), cancel_ms.load());
  // Given up after pause_device_wait (2 s here); an allocation meanwhile waits, then is served.
  std::atomic<int> allocation{-2};
  std::atomic<long long> allocation_ms{-1};
  start = std::chrono::steady_clock::now();
  std::thread allocator{[&] {
    std::this_thread::sleep_for(std::chrono::milliseconds{300});
    void* p      = nullptr;
    auto const r = cudaMalloc(&p, 4096);
    allocation.store(r);
    allocation_ms.store(milliseconds_since(start));
    if (p != nullptr) { check(cudaFree(p), "cudaFree"); }
  }};
  int const paused = f.pause(0);
  std::printf("stuck_pause=%d\nstuck_pause_message=%s\nstuck_pause_ms=%lld\n", paused, f.message(),
              milliseconds_since(start));
  allocator.join();
  std::printf("allocation_during_stuck_pause=%s\nallocation_ms=%lld\n",
              cudaGetErrorName(static_cast<cudaError_t>(allocation.load())), allocation_ms.load());
  released.store(true);
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  expect(f.pause(0) == 0, "a pause once the work is done succeeds");
  expect(f.resume() == 0, "its resume succeeds");
  std::printf("contents_kept=%d\n", all_hold(blocks) ? 1 : 0);
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  free_all(blocks);
  return failures == 0 ? 0 : 1;
}

/// As another user (root becomes 65533) without a runtime directory, where a third user made
/// /tmp/rmm-65533 first: the shim and rmm-ctl both turn to the home directory.
int other_user_from_outside()
{
  if (::geteuid() != 0) {
    std::printf("FAIL: this scenario needs root\n");
    return 2;
  }
  std::fflush(stdout);
  pid_t const child = ::fork();  // before CUDA starts here
  if (child == 0) {
    if (::setgid(65533) != 0 || ::setuid(65533) != 0) { _exit(3); }
    ::setenv("HOME", std::getenv("RMM_TEST_HOME"), 1);
    ::unsetenv("XDG_RUNTIME_DIR");
    int const status = from_outside();
    std::fflush(stdout);
    _exit(status);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

/// The program's mistake: work on paused memory (a copy here, a kernel's access on a GPU). Its
/// context fails; the shim says so while the process is paused, and the resume says why it cannot.
int fault_while_paused()
{
  auto const f = shim();
  (void)baseline();
  std::size_t const bytes = 1 << 20;
  void* p                 = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  check(cudaMemset(p, 1, bytes), "cudaMemset");
  int const paused = f.pause(0);
  std::printf("pause=%d\n", paused);
  std::printf("queued=%s\n", cudaGetErrorName(cudaMemsetAsync(p, 2, bytes, nullptr)));
  std::printf("program_saw=%s\n", cudaGetErrorName(cudaStreamSynchronize(nullptr)));
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::milliseconds{500});  // the watch asks every 100 ms
  std::printf("before_resume\n");
  std::printf("report_while_paused=%d\n", f.print_report(std::getenv("RMM_TEST_PAUSED_REPORT")));
  int const resumed = f.resume();
  std::printf("resume=%d\nresume_message=%s\n", resumed, f.message());
  expect(paused == 0, "the pause succeeds");
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
  std::string_view const scenario = argc > 1 ? argv[1] : "";
  int status                      = 2;
  if (scenario == "in-process") {
    status = in_process();
  } else if (scenario == "timeout") {
    status = timeout();
  } else if (scenario == "discard") {
    status = discard();
  } else if (scenario == "resume-fails") {
    status = resume_fails();
  } else if (scenario == "not-pausable") {
    status = not_pausable();
  } else if (scenario == "under-load") {
    status = under_load();
  } else if (scenario == "keep-host-memory") {
    return keep_host_memory();
  } else if (scenario == "from-outside") {
    status = from_outside();
  } else if (scenario == "bad-requests") {
    status = bad_requests();
  } else if (scenario == "refuse-capture") {
    status = refuse_capture();
  } else if (scenario == "refuse-export") {
    status = refuse_export();
  } else if (scenario == "stream-ordered") {
    status = stream_ordered();
  } else if (scenario == "reset-while-paused") {
    status = reset_while_paused();
  } else if (scenario == "host-memory") {
    status = host_memory();
  } else if (scenario == "ask-while-pausing") {
    status = ask_while_pausing();
  } else if (scenario == "slow-clients") {
    status = slow_clients();
  } else if (scenario == "list-keeps-starting") {
    status = list_keeps_starting();
  } else if (scenario == "exit-while-pausing") {
    status = exit_while_pausing();
  } else if (scenario == "stuck-device") {
    status = stuck_device();
  } else if (scenario == "other-user-from-outside") {
    status = other_user_from_outside();
  } else if (scenario == "fault-while-paused") {
    status = fault_while_paused();
  } else {
    std::printf("FAIL: unknown scenario '%s'\n", argc > 1 ? argv[1] : "");
  }
  std::fflush(stdout);
  return status;
}
