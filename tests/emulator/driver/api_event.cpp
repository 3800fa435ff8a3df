// SPDX-License-Identifier: Apache-2.0
// Entry points: events.
#include "common.hpp"
#include "capture.hpp"
#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "mempool.hpp"
#include "state.hpp"
#include "stream.hpp"

using namespace rmm_emu;

namespace {

CUresult record(CUevent e, CUstream h, unsigned flags, bool per_thread)
{
  RMM_EMU_REQUIRE_INIT();
  if ((flags & ~static_cast<unsigned>(CU_EVENT_RECORD_EXTERNAL)) != 0) { return CUDA_ERROR_INVALID_VALUE; }
  auto ev = lookup_event(e);
  if (ev == nullptr) { return CUDA_ERROR_INVALID_HANDLE; }
  std::shared_ptr<Stream> s;
  if (auto r = resolve_stream(h, per_thread, s); r != CUDA_SUCCESS) { return r; }
  if (&s->context() != &ev->context()) { return CUDA_ERROR_INVALID_HANDLE; }  // must share a context
  ev->record(*s);
  event_recorded(ev.get(), *s);
  pause_if_armed(*s);  // a test holding this thread between the record and what follows it
  return CUDA_SUCCESS;
}

}  // namespace

RMM_EMU_EXPORT CUresult cuEventCreate(CUevent* phEvent, unsigned int flags)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  unsigned const known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (phEvent == nullptr || (flags & ~known) != 0) { return CUDA_ERROR_INVALID_VALUE; }
  // Interprocess events must not record timing.
  if ((flags & CU_EVENT_INTERPROCESS) != 0 && (flags & CU_EVENT_DISABLE_TIMING) == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *phEvent = register_event(std::make_shared<Event>(*ctx, flags));
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuEventRecord(CUevent e, CUstream s) { return record(e, s, 0, false); }
RMM_EMU_EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return record(e, s, 0, true); }
RMM_EMU_EXPORT CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags)
{
  return record(e, s, flags, false);
}
RMM_EMU_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int flags)
{
  return record(e, s, flags, true);
}

RMM_EMU_EXPORT CUresult cuEventQuery(CUevent e)
{
  RMM_EMU_REQUIRE_INIT();
  auto ev = lookup_event(e);
  if (ev == nullptr) { return CUDA_ERROR_INVALID_HANDLE; }
  if (!unsafe_call_allowed(ev->context())) { return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; }
  auto rec = ev->last();
  return rec == nullptr || rec->at.reached() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

RMM_EMU_EXPORT CUresult cuEventSynchronize(CUevent e)
{
  RMM_EMU_REQUIRE_INIT();
  auto ev = lookup_event(e);
  if (ev == nullptr) { return CUDA_ERROR_INVALID_HANDLE; }
  if (!unsafe_call_allowed(ev->context())) { return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; }
  auto rec = ev->last();
  if (rec == nullptr) { return CUDA_SUCCESS; }
  if (!rec->at.reached()) {
    if (on_stream_worker()) { return CUDA_ERROR_NOT_PERMITTED; }
    rec->at.wait();
  }
  trim_pools_at_sync(ev->context().device());
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
  RMM_EMU_REQUIRE_INIT();
  return unregister_event(e) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

RMM_EMU_EXPORT CUresult cuEventDestroy(CUevent e) { return cuEventDestroy_v2(e); }

RMM_EMU_EXPORT CUresult cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end)
{
  RMM_EMU_REQUIRE_INIT();
  if (ms == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  auto a = lookup_event(start);
  auto b = lookup_event(end);
  if (a == nullptr || b == nullptr) { return CUDA_ERROR_INVALID_HANDLE; }
  // Timing disabled or never recorded: "invalid resource handle", as the H200 answers.
  if (!a->timing() || !b->timing()) { return CUDA_ERROR_INVALID_HANDLE; }
  auto ra = a->last();
  auto rb = b->last();
  if (ra == nullptr || rb == nullptr) { return CUDA_ERROR_INVALID_HANDLE; }
  if (!ra->at.reached() || !rb->at.reached()) { return CUDA_ERROR_NOT_READY; }
  auto const t0 = ra->time_ns.load(std::memory_order_acquire);
  auto const t1 = rb->time_ns.load(std::memory_order_acquire);
  *ms           = static_cast<float>(static_cast<double>(t1 - t0) / 1e6);
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end)
{
  return cuEventElapsedTime_v2(ms, start, end);
}
