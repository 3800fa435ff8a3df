// SPDX-License-Identifier: Apache-2.0
// A CUDA program the region tests run under the shim: it tags its allocations with regions
// (rmm_shim_region_begin), pauses and resumes one tag while the rest runs on, from inside and with
// rmm-ctl, and prints what it saw as `key=value` lines; a failed expectation prints `FAIL: ...` and
// makes the exit status non-zero.

#include "client_checks.hpp"

#include <rmm/shim.h>

#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace rmm::test::client;

template <class F>
F function(char const* name)
{
  auto* f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  if (f == nullptr) {
    std::printf("FAIL: the shim does not export %s\n", name);
    std::exit(2);
  }
  return f;
}

/// The shim's control functions (the shim is preloaded).
struct shim_functions {
  int (*begin)(char const*, unsigned int) = function<int (*)(char const*, unsigned int)>("rmm_shim_region_begin");
  int (*end)()                            = function<int (*)()>("rmm_shim_region_end");
  char const* (*current)()                = function<char const* (*)()>("rmm_shim_region_current");
  int (*pause)(char const*, unsigned int) = function<int (*)(char const*, unsigned int)>("rmm_shim_pause_tag");
  int (*resume)(char const*)              = function<int (*)(char const*)>("rmm_shim_resume_tag");
  char const* (*message)()                = function<char const* (*)()>("rmm_shim_last_message");
  int (*print_report)(char const*)        = function<int (*)(char const*)>("rmm_shim_print_report");
};

/// A device block filled with one byte value.
struct block {
  void* ptr{nullptr};
  std::size_t size{0};
  unsigned char value{0};
};

block filled(std::size_t size, unsigned char value)
{
  block b{nullptr, size, value};
  check(cudaMalloc(&b.ptr, size), "cudaMalloc");
  check(cudaMemset(b.ptr, value, size), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return b;
}

bool holds(block const& b)
{
  std::vector<unsigned char> now(b.size);
  check(cudaMemcpy(now.data(), b.ptr, b.size, cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (auto const byte : now) {
    if (byte != b.value) { return false; }
  }
  return true;
}

/// `name=RESULT` and `name_message=...` of a control call.
int said(char const* name, int result, shim_functions const& f)
{
  std::printf("%s=%d\n%s_message=%s\n", name, result, name, f.message());
  return result;
}

constexpr std::size_t mib = std::size_t{1} << 20;

/// Weights kept, a KV cache discarded, untagged memory running on while the cache is paused.
int tags()
{
  shim_functions const f;
  check(cudaFree(nullptr), "cudaFree(nullptr)");
  std::printf("current_outside=%s\n", f.current() == nullptr ? "none" : f.current());
  said("begin_weights", f.begin("weights", 0), f);
  auto const weights = filled(64 * mib, 0x5a);
  said("begin_kv", f.begin("kv_cache", RMM_SHIM_REGION_DISCARD), f);
  std::printf("current_nested=%s\n", f.current() == nullptr ? "none" : f.current());
  auto const kv       = filled(64 * mib, 0x33);
  auto const kv_freed = filled(4 * mib, 0x44);
  expect(f.end() == 0, "the kv_cache region ends");
  expect(f.end() == 0, "the weights region ends");
  said("end_none", f.end(), f);
  auto const untagged = filled(16 * mib, 0x77);

  auto const before = free_bytes();
  said("pause_kv", f.pause("kv_cache", 0), f);
  auto const while_paused = free_bytes();
  std::printf("given_back=%d\n", while_paused >= before + 64 * mib ? 1 : 0);
  said("pause_kv_again", f.pause("kv_cache", 0), f);
  said("pause_unknown", f.pause("nope", 0), f);
  said("pause_bad_name", f.pause("bad name", 0), f);
  said("resume_weights", f.resume("weights"), f);

  // Untagged memory runs on; an allocation under the paused tag waits for its resume.
  void* served = nullptr;
  std::printf("untagged_while_paused=%s\n", cudaGetErrorName(cudaMalloc(&served, 8 * mib)));
  std::printf("untagged_holds=%d\n", holds(untagged) ? 1 : 0);
  std::atomic<int> allocated{0};
  void* waited = nullptr;
  std::thread allocator{[&] {
    if (f.begin("kv_cache", RMM_SHIM_REGION_DISCARD) != 0) { allocated.store(-2); }
    auto const r = cudaMalloc(&waited, 2 * mib);
    (void)f.end();
    allocated.store(r == cudaSuccess ? 1 : -1);
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  std::printf("tagged_allocated_while_paused=%d\n", allocated.load());
  check(cudaFree(kv_freed.ptr), "cudaFree of a paused tag's block");  // held for the resume
  std::printf("report_while_paused=%d\n", f.print_report(std::getenv("RMM_TEST_PAUSED_REPORT")));

  said("resume_kv", f.resume("kv_cache"), f);
  allocator.join();
  std::printf("tagged_allocated_after_resume=%d\n", allocated.load());
  said("resume_kv_again", f.resume("kv_cache"), f);
  std::printf("weights_hold=%d\n", holds(weights) ? 1 : 0);

  // Kept by the pause's flag, whatever the region said; then a pause of the whole process, in
  // which each tag does as its region said.
  check(cudaMemset(kv.ptr, kv.value, kv.size), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  said("pause_kv_keep", f.pause("kv_cache", RMM_SHIM_PAUSE_KEEP), f);
  said("resume_kv_keep", f.resume("kv_cache"), f);
  std::printf("kv_kept_holds=%d\n", holds(kv) ? 1 : 0);
  said("pause_weights", f.pause("weights", 0), f);
  said("pause_all", f.pause(nullptr, 0), f);
  said("resume_tag_while_all", f.resume("weights"), f);
  said("resume_all", f.resume(nullptr), f);
  std::printf("after_all_weights_hold=%d\nafter_all_untagged_holds=%d\n", holds(weights) ? 1 : 0,
              holds(untagged) ? 1 : 0);
  for (void* p : {weights.ptr, kv.ptr, untagged.ptr, served, waited}) { check(cudaFree(p), "cudaFree"); }
  return failures == 0 ? 0 : 1;
}

/// Bad arguments, the process-wide region, and the table of tags running full.
int flags()
{
  shim_functions const f;
  check(cudaFree(nullptr), "cudaFree(nullptr)");
  said("begin_null", f.begin(nullptr, 0), f);
  said("begin_bad_flags", f.begin("x", 8), f);
  said("pause_bad_flags", f.pause(nullptr, RMM_SHIM_PAUSE_DISCARD | RMM_SHIM_PAUSE_KEEP), f);
  said("begin_all", f.begin("loader", RMM_SHIM_REGION_ALL_THREADS), f);
  said("begin_all_again", f.begin("other", RMM_SHIM_REGION_ALL_THREADS), f);
  std::string seen;
  void* on_thread = nullptr;
  std::thread worker{[&] {
    seen = f.current() == nullptr ? "none" : f.current();
    check(cudaMalloc(&on_thread, 3 * mib), "cudaMalloc");
  }};
  worker.join();
  std::printf("worker_tag=%s\n", seen.c_str());
  said("end_all", f.end(), f);
  std::printf("current_after_all=%s\n", f.current() == nullptr ? "none" : f.current());
  int registered = 2;  // loader and other
  for (int i = 0;; ++i) {
    auto const name = "tag" + std::to_string(i);
    if (f.begin(name.c_str(), 0) != 0) {
      std::printf("tags_registered=%d\ntable_full_message=%s\n", registered, f.message());
      break;
    }
    ++registered;
    (void)f.end();
  }
  auto const self = std::to_string(::getpid());
  said("pause_loader_from_ctl", run_ctl("ctl_pause", self + " pause --tag loader --discard"), f);
  run_ctl("ctl_pause_unknown", self + " pause --tag nope");
  run_ctl("ctl_bad_option", self + " pause --tag");
  run_ctl("ctl_report", self + " report --json");
  run_ctl("ctl_resume", self + " resume --tag loader");
  check(cudaFree(on_thread), "cudaFree");
  return failures == 0 ? 0 : 1;
}

/// The other phase took the paused tag's memory and freed it: the resume has it back from the
/// untagged stack, which keeps what was freed.
int resume_after_other_phase()
{
  shim_functions const f;
  check(cudaFree(nullptr), "cudaFree(nullptr)");
  expect(f.begin("kv_cache", 0) == 0, "the region begins");
  auto const kv = filled(96 * mib, 0x21);
  expect(f.end() == 0, "the region ends");
  said("pause", f.pause("kv_cache", 0), f);
  void* phase = nullptr;
  std::printf("other_phase=%s\n", cudaGetErrorName(cudaMalloc(&phase, 200 * mib)));
  check(cudaFree(phase), "cudaFree");
  said("resume", f.resume("kv_cache"), f);
  std::printf("kv_holds=%d\n", holds(kv) ? 1 : 0);
  check(cudaFree(kv.ptr), "cudaFree");
  return failures == 0 ? 0 : 1;
}

/// A device reset while a tag is paused ends the tag's pause: its memory went with the reset.
int reset_while_paused()
{
  shim_functions const f;
  check(cudaFree(nullptr), "cudaFree(nullptr)");
  expect(f.begin("kv_cache", 0) == 0, "the region begins");
  auto const kv = filled(8 * mib, 0x21);
  said("pause", f.pause("kv_cache", 0), f);
  check(cudaDeviceReset(), "cudaDeviceReset");
  void* after = nullptr;
  std::printf("allocated_after_reset=%s\n", cudaGetErrorName(cudaMalloc(&after, 4 * mib)));
  expect(f.end() == 0, "the region ends");
  said("resume_after_reset", f.resume("kv_cache"), f);
  (void)kv;
  if (after != nullptr) { check(cudaFree(after), "cudaFree"); }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
  std::string const scenario = argc > 1 ? argv[1] : "";
  int status                 = 64;
  if (scenario == "tags") {
    status = tags();
  } else if (scenario == "flags") {
    status = flags();
  } else if (scenario == "resume-after-other-phase") {
    status = resume_after_other_phase();
  } else if (scenario == "reset-while-paused") {
    status = reset_while_paused();
  } else {
    std::printf("usage: region_client tags|flags|resume-after-other-phase|reset-while-paused\n");
  }
  std::fflush(stdout);
  return status;
}
