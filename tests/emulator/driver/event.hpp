// SPDX-License-Identifier: Apache-2.0
// Events: a marker at a stream position. Complete once the stream reaches it; never-recorded
// events count as complete, as on the H200.
#pragma once

#include "common.hpp"
#include "stream.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace rmm_emu {

class Context;

class Event {
 public:
  Event(Context& ctx, unsigned flags) : ctx_{ctx}, flags_{flags} {}

  Context& context() const { return ctx_; }
  unsigned flags() const { return flags_; }
  bool timing() const { return (flags_ & CU_EVENT_DISABLE_TIMING) == 0; }

  // One cuEventRecord: where it sits and, once reached, when (steady clock, ns).
  struct Record {
    StreamPos at;
    std::atomic<std::int64_t> time_ns{-1};
  };

  void record(Stream& s);
  std::shared_ptr<Record> last() const;  // null until first recorded

 private:
  Context& ctx_;
  unsigned const flags_;
  mutable std::mutex m_;
  std::shared_ptr<Record> last_;
};

// Pausing a recording thread (control API): the next cuEventRecord on the armed stream, once its
// record is enqueued, blocks the calling thread until resume_event_records().
void arm_event_record_pause(std::shared_ptr<Stream> s);
void pause_if_armed(Stream const& s);  // called by cuEventRecord after enqueuing
int paused_event_records();
void resume_event_records();  // releases every paused thread and disarms

CUevent register_event(std::shared_ptr<Event> e);
std::shared_ptr<Event> lookup_event(CUevent handle);
std::shared_ptr<Event> unregister_event(CUevent handle);

}  // namespace rmm_emu
