#include "event.hpp"

#include "context.hpp"

#include <chrono>
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

}  // namespace

void Event::record(Stream& s)
{
  auto rec = std::make_shared<Record>();
  rec->at.stream = s.shared_from_this();
  rec->at.pos = s.context().enqueue(s, [rec] {
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

CUevent register_event(std::shared_ptr<Event> e)
{
  auto handle = reinterpret_cast<CUevent>(e.get());
  auto& r = registry();
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
