// SPDX-License-Identifier: Apache-2.0
// Contexts: one primary context per device, the per-thread current-context stack, and the
// legacy default stream's implicit synchronization with the context's blocking streams.
#pragma once

#include "common.hpp"
#include "stream.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace rmm_emu {

class Device;

class Context {
 public:
  explicit Context(Device& dev);
  Context(Context const&)            = delete;
  Context& operator=(Context const&) = delete;

  Device& device() const { return dev_; }
  CUcontext handle() { return reinterpret_cast<CUcontext>(this); }
  static Context* from_handle(CUcontext handle);  // nullptr when not one of ours

  std::shared_ptr<Stream> legacy_stream() const { return legacy_; }
  std::shared_ptr<Stream> per_thread_stream();  // the calling thread's, created on first use
  std::shared_ptr<Stream> create_stream(unsigned stream_flags, int priority);
  void forget(Stream* s);  // a destroyed stream finished its work

  // Appends work to `s` (a stream of this context) with the legacy-stream rules: legacy work waits
  // for all prior work of the blocking streams; blocking streams' work waits for prior legacy work.
  std::uint64_t enqueue(Stream& s, std::function<void()> fn, std::vector<StreamPos> deps = {});

  // Waits for everything enqueued so far on every stream of the context.
  void synchronize();

  // User streams, for cuDevicePrimaryCtxReset.
  std::vector<std::shared_ptr<Stream>> user_streams();

  // Primary-context bookkeeping (cuDevicePrimaryCtx*).
  std::mutex state_mutex;
  unsigned retain_count = 0;
  unsigned flags        = 0;
  std::set<Context*> peers;  // cuCtxEnablePeerAccess

  // A fault its work met (RMM_EMU_STICKY_FAULTS), kept as a GPU keeps it: CUDA_SUCCESS until then.
  std::atomic<CUresult> fault{CUDA_SUCCESS};

 private:
  Device& dev_;
  std::mutex order_mutex_;  // serialises enqueues that must see each other
  std::shared_ptr<Stream> legacy_;
  std::vector<std::shared_ptr<Stream>> streams_;  // every non-legacy stream with possible work
};

// The calling thread's context stack.
Context* current_context();
void set_current_context(Context* ctx);  // replaces the top (nullptr pops it)
void push_current_context(Context* ctx);
Context* pop_current_context();

}  // namespace rmm_emu

// Entry points that work on "the current context" start with this.
#define RMM_EMU_REQUIRE_CONTEXT(var)                      \
  RMM_EMU_REQUIRE_INIT();                                 \
  ::rmm_emu::Context* var = ::rmm_emu::current_context(); \
  if (var == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
