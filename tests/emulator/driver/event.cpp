// SPDX-License-Identifier: Apache-2.0
#include "event.hpp"

#include "context.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <unordered_map>

namespace rmm_emu {
namespace {

struct Registry {
  std::mutex m;
  std::unordered_map<CUevent, std::shared_ptr<Event>> events;
};

Registry& registry()
{
  static auto* r = new Registry;
  return *r;
}

struct RecordPause {
  std::atomic<bool> any_armed{false};  // lets every other record skip the lock
  std::mutex m;
  std::condition_variable cv;
  std::shared_ptr<Stream> armed;
  std::uint64_t generation = 0;  // moves on each resume
  int paused               = 0;
};

RecordPause& record_pause()
{
  static auto* p = new RecordPause;  // never destroyed, like the registry
  return *p;
}

}  // namespace

void Event::record(Stream& s)
{
  auto rec       = std::make_shared<Record>();
  rec->at.stream = s.shared_from_this();
  rec->at.pos    = s.context().enqueue(s, [rec] {
    auto const now = std::chrono::steady_clock::now().time_since_epoch();
    rec->time_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(), std::memory_order_release);
  });
  std::lock_guard lock(m_);
  last_ = std::move(rec);
}

std::shared_ptr<Event::Record> Event::last() const
{
  std::lock_guard lock(m_);
  return last_;
}

void arm_event_record_pause(std::shared_ptr<Stream> s)
{
  auto& p = record_pause();
  std::lock_guard lock(p.m);
  p.armed = std::move(s);
  p.any_armed.store(true);
}

void pause_if_armed(Stream const& s)
{
  auto& p = record_pause();
  if (!p.any_armed.load()) { return; }
  std::unique_lock lock(p.m);
  if (p.armed.get() != &s) { return; }
  p.armed.reset();
  p.any_armed.store(false);
  auto const generation = p.generation;
  ++p.paused;
  p.cv.wait(lock, [&] { return p.generation != generation; });
  --p.paused;
}

int paused_event_records()
{
  auto& p = record_pause();
  std::lock_guard lock(p.m);
  return p.paused;
}

void resume_event_records()
{
  auto& p = record_pause();
  {
    std::lock_guard lock(p.m);
    p.armed.reset();
    p.any_armed.store(false);
    ++p.generation;
  }
  p.cv.notify_all();
}

CUevent register_event(std::shared_ptr<Event> e)
{
  auto handle = reinterpret_cast<CUevent>(e.get());
  auto& r     = registry();
  std::lock_guard lock(r.m);
  r.events[handle] = std::move(e);
  return handle;
}

std::shared_ptr<Event> lookup_event(CUevent handle)
{
  auto& r = registry();
  std::lock_guard lock(r.m);
  auto it = r.events.find(handle);
  return it == r.events.end() ? nullptr : it->second;
}

std::shared_ptr<Event> unregister_event(CUevent handle)
{
  auto& r = registry();
  std::lock_guard lock(r.m);
  auto it = r.events.find(handle);
  if (it == r.events.end()) { return nullptr; }
  auto e = std::move(it->second);
  r.events.erase(it);
  return e;
}

}  // namespace rmm_emu
