// SPDX-License-Identifier: Apache-2.0
#include "capture.hpp"

#include "context.hpp"
#include "stream.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

namespace rmm_emu {

namespace {

struct capture {
  std::shared_ptr<Stream> stream;
  CUstreamCaptureMode mode;
  std::thread::id thread;  // the thread that began the sequence
  std::uint64_t sequence;  // shared by the stream that began it and the streams that joined
  bool joined;
};

struct captured_event {
  void const* event;
  std::uint64_t sequence;
};

std::vector<captured_event>& captured_events()
{
  static auto* all = new std::vector<captured_event>;
  return *all;
}

std::mutex& captures_mutex()
{
  static auto* m = new std::mutex;
  return *m;
}

std::vector<capture>& captures()
{
  static auto* all = new std::vector<capture>;
  return *all;
}

/// The entry of `s` (lock held), or null.
capture* find(Stream const& s)
{
  for (auto& c : captures()) {
    if (c.stream.get() == &s) { return &c; }
  }
  return nullptr;
}

}  // namespace

CUstreamCaptureMode& thread_capture_mode()
{
  thread_local CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  return mode;
}

void capture_began(std::shared_ptr<Stream> const& s, CUstreamCaptureMode mode)
{
  static std::uint64_t next_sequence = 1;
  std::lock_guard lock(captures_mutex());
  captures().push_back({s, mode, std::this_thread::get_id(), next_sequence++, false});
}

void capture_ended(Stream const& s)
{
  std::lock_guard lock(captures_mutex());
  std::erase_if(captures(), [&s](capture const& c) { return c.stream.get() == &s; });
}

void event_recorded(void const* event, Stream const& s)
{
  std::lock_guard lock(captures_mutex());
  std::erase_if(captured_events(), [event](captured_event const& e) { return e.event == event; });
  if (auto const* c = find(s); c != nullptr && s.capture_status() != CU_STREAM_CAPTURE_STATUS_NONE) {
    captured_events().push_back({event, c->sequence});
  }
}

void stream_waited(std::shared_ptr<Stream> const& waiter, void const* event)
{
  std::lock_guard lock(captures_mutex());
  auto const recorded = std::find_if(captured_events().begin(), captured_events().end(),
                                     [event](captured_event const& e) { return e.event == event; });
  if (recorded == captured_events().end() || find(*waiter) != nullptr) { return; }
  auto const origin = std::find_if(captures().begin(), captures().end(),
                                   [&](capture const& c) { return c.sequence == recorded->sequence && !c.joined; });
  if (origin == captures().end() || !waiter->begin_capture()) { return; }
  capture joined = *origin;
  joined.stream  = waiter;
  joined.joined  = true;
  captures().push_back(joined);
}

void capture_ending(Stream& origin)
{
  std::lock_guard lock(captures_mutex());
  auto const* c = find(origin);
  if (c == nullptr) { return; }
  auto const sequence = c->sequence;
  bool invalid        = false;
  for (auto const& member : captures()) {
    if (member.sequence != sequence || !member.joined) { continue; }
    invalid = member.stream->end_capture() == CU_STREAM_CAPTURE_STATUS_INVALIDATED || invalid;
  }
  std::erase_if(captures(), [sequence](capture const& m) { return m.sequence == sequence && m.joined; });
  std::erase_if(captured_events(), [sequence](captured_event const& e) { return e.sequence == sequence; });
  if (invalid) { origin.invalidate_capture(); }
}

std::uint64_t capture_sequence(Stream const& s)
{
  if (s.capture_status() == CU_STREAM_CAPTURE_STATUS_NONE) { return 0; }
  std::lock_guard lock(captures_mutex());
  auto const* c = find(s);
  return c == nullptr ? 0 : c->sequence;
}

bool unsafe_call_allowed(Context const& ctx)
{
  if (thread_capture_mode() == CU_STREAM_CAPTURE_MODE_RELAXED) { return true; }
  std::lock_guard lock(captures_mutex());
  bool allowed = true;
  for (auto const& c : captures()) {
    if (&c.stream->context() != &ctx || c.stream->capture_status() != CU_STREAM_CAPTURE_STATUS_ACTIVE) { continue; }
    bool const forbids = c.mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
                         (c.mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && c.thread == std::this_thread::get_id());
    if (forbids) {
      c.stream->invalidate_capture();
      allowed = false;
    }
  }
  return allowed;
}

bool invalidate_captures(Context const& ctx)
{
  std::lock_guard lock(captures_mutex());
  bool any = false;
  for (auto const& c : captures()) {
    if (&c.stream->context() != &ctx || c.stream->capture_status() != CU_STREAM_CAPTURE_STATUS_ACTIVE) { continue; }
    c.stream->invalidate_capture();
    any = true;
  }
  return any;
}

}  // namespace rmm_emu
