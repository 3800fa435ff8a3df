// SPDX-License-Identifier: Apache-2.0
#include "context.hpp"

#include "device.hpp"
#include "state.hpp"

#include <algorithm>
#include <type_traits>

namespace rmm_emu {
namespace {

// The calling thread's context stack. Trivially destructible on purpose: the main thread's
// thread_local objects are destroyed before static destructors and atexit handlers run, and the
// driver calls those make at exit must still find the stack (a real driver answers them).
class ContextStack {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  Context*& back() { return at(size_ - 1); }
  void push_back(Context* ctx)
  {
    if (size_ >= kInline) {
      if (spill_ == nullptr) { spill_ = new std::vector<Context*>; }  // kept for the thread's life
      spill_->resize(size_ - kInline + 1);
    }
    at(size_++) = ctx;
  }
  void pop_back() { --size_; }

 private:
  static constexpr std::size_t kInline = 16;
  Context*& at(std::size_t i) { return i < kInline ? inline_[i] : (*spill_)[i - kInline]; }

  Context* inline_[kInline];
  std::size_t size_;
  std::vector<Context*>* spill_;  // entries past kInline (deep cuCtxPushCurrent nesting)
};
static_assert(std::is_trivially_destructible_v<ContextStack>);
thread_local ContextStack t_stack{};

// The calling thread's per-thread default streams, one per context; destroyed (their queued work
// still completes) when the thread exits, as the real per-thread stream goes with its thread.
struct PerThreadStreams {
  std::vector<std::pair<Context*, std::shared_ptr<Stream>>> streams;
  PerThreadStreams()                                   = default;
  PerThreadStreams(PerThreadStreams const&)            = delete;
  PerThreadStreams& operator=(PerThreadStreams const&) = delete;
  ~PerThreadStreams()
  {
    for (auto& entry : streams) { entry.second->destroy(); }
  }
};
thread_local PerThreadStreams t_per_thread;

}  // namespace

Context::Context(Device& dev) : dev_{dev}, legacy_{std::make_shared<Stream>(*this, Stream::Kind::legacy, 0, 0)} {}

Context* Context::from_handle(CUcontext handle)
{
  for (int i = 0; i < device_count(); ++i) {
    Context& c = rmm_emu::device(i)->primary();
    if (c.handle() == handle) { return &c; }
  }
  return nullptr;
}

std::shared_ptr<Stream> Context::per_thread_stream()
{
  for (auto& entry : t_per_thread.streams) {
    if (entry.first == this) { return entry.second; }
  }
  auto s = std::make_shared<Stream>(*this, Stream::Kind::per_thread, 0, 0);
  {
    std::lock_guard lock(order_mutex_);
    streams_.push_back(s);
  }
  t_per_thread.streams.emplace_back(this, s);
  return s;
}

std::shared_ptr<Stream> Context::create_stream(unsigned stream_flags, int priority)
{
  auto s = std::make_shared<Stream>(*this, Stream::Kind::user, stream_flags, priority);
  std::lock_guard lock(order_mutex_);
  streams_.push_back(s);
  return s;
}

void Context::forget(Stream* s)
{
  std::lock_guard lock(order_mutex_);
  std::erase_if(streams_, [s](auto const& p) { return p.get() == s; });
}

std::uint64_t Context::enqueue(Stream& s, std::function<void()> fn, std::vector<StreamPos> deps)
{
  std::lock_guard lock(order_mutex_);
  if (s.kind() == Stream::Kind::legacy) {
    for (auto const& other : streams_) {
      // The legacy stream cannot wait for a stream whose work goes into a graph: the driver ends
      // that capture as invalid.
      if (other->blocking()) { other->invalidate_capture(); }
      if (other->blocking() && !other->idle()) { deps.push_back({other, other->last_enqueued()}); }
    }
  } else if (s.blocking() && !legacy_->idle()) {
    deps.push_back({legacy_, legacy_->last_enqueued()});
  }
  return s.push(std::move(fn), std::move(deps));
}

void Context::synchronize()
{
  std::vector<StreamPos> targets;
  {
    std::lock_guard lock(order_mutex_);
    targets.push_back({legacy_, legacy_->last_enqueued()});
    for (auto const& s : streams_) { targets.push_back({s, s->last_enqueued()}); }
  }
  for (auto const& t : targets) { t.wait(); }
}

std::vector<std::shared_ptr<Stream>> Context::user_streams()
{
  std::lock_guard lock(order_mutex_);
  std::vector<std::shared_ptr<Stream>> out;
  for (auto const& s : streams_) {
    if (s->kind() == Stream::Kind::user) { out.push_back(s); }
  }
  return out;
}

Context* current_context() { return t_stack.empty() ? nullptr : t_stack.back(); }

void set_current_context(Context* ctx)
{
  if (ctx == nullptr) {
    if (!t_stack.empty()) { t_stack.pop_back(); }
  } else if (t_stack.empty()) {
    t_stack.push_back(ctx);
  } else {
    t_stack.back() = ctx;
  }
}

void push_current_context(Context* ctx) { t_stack.push_back(ctx); }

Context* pop_current_context()
{
  if (t_stack.empty()) { return nullptr; }
  Context* top = t_stack.back();
  t_stack.pop_back();
  return top;
}

}  // namespace rmm_emu
