// SPDX-License-Identifier: Apache-2.0
#include "stream.hpp"

#include "config.hpp"
#include "context.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace rmm_emu {
namespace {

thread_local bool t_on_worker = false;
std::atomic<std::uint64_t> g_next_stream_id{1};
std::atomic<int> g_host_waiters{0};

struct Registry {
  std::mutex m;
  std::unordered_map<CUstream, std::shared_ptr<Stream>> streams;
  // Handles handed out while RMM_EMU_REUSE_STREAM_HANDLES is on: addresses of one-byte blocks that
  // are never freed, so they can never equal a live stream's address.
  std::unordered_set<CUstream> tokens;
  std::vector<CUstream> spare_tokens;  // of destroyed streams, the last destroyed at the back
};

Registry& registry()
{
  static auto* r = new Registry;  // never destroyed (see settings())
  return *r;
}

}  // namespace

bool StreamPos::reached() const { return stream == nullptr || stream->completed() >= pos; }

void StreamPos::wait() const
{
  if (stream != nullptr) { stream->wait(pos); }
}

Stream::Stream(Context& ctx, Kind kind, unsigned flags, int priority)
  : ctx_{ctx}, kind_{kind}, flags_{flags}, priority_{priority}, id_{g_next_stream_id.fetch_add(1)}
{
}

std::uint64_t Stream::push(std::function<void()> fn, std::vector<StreamPos> deps)
{
  std::uint64_t pos = 0;
  bool start        = false;
  {
    std::lock_guard lock(m_);
    pos = ++enqueued_;
    queue_.push_back(Op{pos, std::move(deps), std::move(fn)});
    if (!worker_running_) {
      worker_running_ = true;
      start           = true;
    }
  }
  if (start) {
    // Detached: a worker blocked on an idle stream must never hold up process exit.
    try {
      std::thread([self = shared_from_this()] { self->run(); }).detach();
    } catch (std::system_error const& e) {
      // Without a worker the queued work would never run and every wait would hang: stop loudly.
      std::fprintf(stderr, "rmm CUDA emulator: cannot start a stream worker thread: %s\n", e.what());
      std::abort();
    }
  } else {
    cv_.notify_all();
  }
  return pos;
}

std::uint64_t Stream::last_enqueued() const
{
  std::lock_guard lock(m_);
  return enqueued_;
}

void Stream::wait(std::uint64_t pos) const
{
  if (completed() >= pos) { return; }
  bool const host = !on_stream_worker();
  if (host) { g_host_waiters.fetch_add(1); }
  {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return completed_.load(std::memory_order_acquire) >= pos; });
  }
  if (host) { g_host_waiters.fetch_sub(1); }
}

bool Stream::blocked_on_dependency() const
{
  std::lock_guard lock(m_);
  std::vector<StreamPos> const* deps = nullptr;
  if (holding_op_) {
    deps = &holding_deps_;
  } else if (!queue_.empty()) {
    deps = &queue_.front().deps;
  }
  if (deps == nullptr) { return false; }
  for (auto const& dep : *deps) {
    if (dep.stream.get() != this && !dep.reached()) { return true; }
  }
  return false;
}

void Stream::destroy()
{
  bool forget_now = false;
  {
    std::lock_guard lock(m_);
    destroyed_ = true;
    forget_now = !worker_running_;
  }
  cv_.notify_all();
  if (forget_now) { ctx_.forget(this); }
}

void Stream::run()
{
  t_on_worker = true;
  for (;;) {
    Op op;
    {
      std::unique_lock lock(m_);
      cv_.wait(lock, [&] { return !queue_.empty() || destroyed_; });
      if (queue_.empty()) {
        worker_running_ = false;
        break;
      }
      op = std::move(queue_.front());
      queue_.pop_front();
      holding_op_   = true;
      holding_deps_ = op.deps;
    }
    for (auto const& dep : op.deps) { dep.wait(); }
    {
      std::lock_guard lock(m_);
      holding_deps_.clear();
    }
    if (auto const delay = settings().stream_delay_us.load(std::memory_order_relaxed); delay != 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(delay));
    }
    if (op.fn) { op.fn(); }
    op = Op{};  // drop captured state (and dependencies) before announcing completion
    {
      std::lock_guard lock(m_);
      completed_.store(completed_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
      holding_op_ = false;
    }
    cv_.notify_all();
  }
  ctx_.forget(this);
}

bool on_stream_worker() { return t_on_worker; }

int host_waiters() { return g_host_waiters.load(); }

CUresult resolve_stream(CUstream handle, bool per_thread, std::shared_ptr<Stream>& out)
{
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
    Context* ctx = current_context();
    if (ctx == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
    bool const use_per_thread = handle == CU_STREAM_PER_THREAD || (handle == nullptr && per_thread);
    out                       = use_per_thread ? ctx->per_thread_stream() : ctx->legacy_stream();
    return CUDA_SUCCESS;
  }
  auto& r = registry();
  std::lock_guard lock(r.m);
  auto it = r.streams.find(handle);
  if (it == r.streams.end()) { return CUDA_ERROR_INVALID_HANDLE; }
  out = it->second;
  return CUDA_SUCCESS;
}

CUstream register_stream(std::shared_ptr<Stream> s)
{
  auto handle = reinterpret_cast<CUstream>(s.get());
  auto& r     = registry();
  std::lock_guard lock(r.m);
  if (settings().reuse_stream_handles.load() != 0) {
    if (!r.spare_tokens.empty()) {
      handle = r.spare_tokens.back();
      r.spare_tokens.pop_back();
    } else {
      handle = reinterpret_cast<CUstream>(new char);  // never freed: see Registry::tokens
      r.tokens.insert(handle);
    }
  }
  r.streams[handle] = std::move(s);
  return handle;
}

std::shared_ptr<Stream> unregister_stream(CUstream handle)
{
  auto& r = registry();
  std::lock_guard lock(r.m);
  auto it = r.streams.find(handle);
  if (it == r.streams.end()) { return nullptr; }
  auto s = std::move(it->second);
  r.streams.erase(it);
  if (r.tokens.count(handle) != 0) { r.spare_tokens.push_back(handle); }
  return s;
}

void unregister_stream(Stream const& s)
{
  CUstream handle = nullptr;
  {
    auto& r = registry();
    std::lock_guard lock(r.m);
    for (auto const& [h, stream] : r.streams) {
      if (stream.get() == &s) {
        handle = h;
        break;
      }
    }
  }
  if (handle != nullptr) { (void)unregister_stream(handle); }
}

bool Stream::begin_capture()
{
  auto expected = CU_STREAM_CAPTURE_STATUS_NONE;
  return capture_.compare_exchange_strong(expected, CU_STREAM_CAPTURE_STATUS_ACTIVE, std::memory_order_acq_rel);
}

CUstreamCaptureStatus Stream::end_capture()
{
  return capture_.exchange(CU_STREAM_CAPTURE_STATUS_NONE, std::memory_order_acq_rel);
}

void Stream::invalidate_capture()
{
  auto expected = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  (void)capture_.compare_exchange_strong(expected, CU_STREAM_CAPTURE_STATUS_INVALIDATED, std::memory_order_acq_rel);
}

}  // namespace rmm_emu
