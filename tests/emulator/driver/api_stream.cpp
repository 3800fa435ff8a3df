// SPDX-License-Identifier: Apache-2.0
// Entry points: streams, host functions, capture queries.
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

constexpr int kLeastPriority    = 0;
constexpr int kGreatestPriority = -5;

#define RMM_EMU_RESOLVE(var, handle, per_thread) \
  RMM_EMU_REQUIRE_INIT();                        \
  std::shared_ptr<Stream> var;                   \
  if (auto r_ = resolve_stream(handle, per_thread, var); r_ != CUDA_SUCCESS) { return r_; }

/// Whether a query of, or a wait for, `s` is refused now (capture.hpp): `s` is capturing (which
/// ends its capture), or a capture forbids the call.
bool refused_during_capture(Stream& s)
{
  if (s.capture_status() == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
    s.invalidate_capture();
    return true;
  }
  return !unsafe_call_allowed(s.context());
}

CUresult synchronize(CUstream h, bool per_thread)
{
  RMM_EMU_RESOLVE(s, h, per_thread);
  if (on_stream_worker()) { return CUDA_ERROR_NOT_PERMITTED; }
  if (refused_during_capture(*s)) { return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; }
  if (s->kind() == Stream::Kind::legacy) {
    // The legacy stream's point of view includes all prior work of the blocking streams.
    s->wait(s->context().enqueue(*s, {}));
  } else {
    s->wait(s->last_enqueued());
  }
  if (auto const fault = s->context().fault.load(); fault != CUDA_SUCCESS) { return fault; }
  trim_pools_at_sync(s->context().device());
  return CUDA_SUCCESS;
}

CUresult query(CUstream h, bool per_thread)
{
  RMM_EMU_RESOLVE(s, h, per_thread);
  if (refused_during_capture(*s)) { return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; }
  if (auto const fault = s->context().fault.load(); fault != CUDA_SUCCESS) { return fault; }
  return s->idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult wait_event(CUstream h, CUevent e, unsigned flags, bool per_thread)
{
  RMM_EMU_RESOLVE(s, h, per_thread);
  if ((flags & ~static_cast<unsigned>(CU_EVENT_WAIT_EXTERNAL)) != 0) { return CUDA_ERROR_INVALID_VALUE; }
  auto ev = lookup_event(e);
  if (ev == nullptr) { return CUDA_ERROR_INVALID_HANDLE; }
  stream_waited(s, ev.get());
  auto rec = ev->last();
  if (rec == nullptr || rec->at.reached()) { return CUDA_SUCCESS; }  // nothing left to wait for
  s->context().enqueue(*s, {}, {rec->at});
  return CUDA_SUCCESS;
}

CUresult host_func(CUstream h, CUhostFn fn, void* data, bool per_thread)
{
  RMM_EMU_RESOLVE(s, h, per_thread);
  if (fn == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  s->context().enqueue(*s, [fn, data] { fn(data); });
  return CUDA_SUCCESS;
}

CUresult add_callback(CUstream h, CUstreamCallback cb, void* data, unsigned flags, bool per_thread)
{
  RMM_EMU_RESOLVE(s, h, per_thread);
  if (cb == nullptr || flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  s->context().enqueue(*s, [cb, h, data] { cb(h, CUDA_SUCCESS, data); });
  return CUDA_SUCCESS;
}

template <class T, class F>
CUresult get(CUstream h, bool per_thread, T* out, F&& read)
{
  RMM_EMU_RESOLVE(s, h, per_thread);
  if (out == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  *out = read(*s);
  return CUDA_SUCCESS;
}

CUresult capture_info(CUstream h, bool per_thread, CUstreamCaptureStatus* status)
{
  return get(h, per_thread, status, [](Stream const& s) { return s.capture_status(); });
}

}  // namespace

RMM_EMU_EXPORT CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  if (phStream == nullptr || (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Out-of-range priorities are clamped, as documented.
  priority = priority > kLeastPriority ? kLeastPriority : (priority < kGreatestPriority ? kGreatestPriority : priority);
  *phStream = register_stream(ctx->create_stream(flags, priority));
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuStreamCreate(CUstream* phStream, unsigned int flags)
{
  return cuStreamCreateWithPriority(phStream, flags, 0);
}

// Returns at once; queued work still completes (the worker drains, then leaves).
RMM_EMU_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
  RMM_EMU_REQUIRE_INIT();
  auto s = unregister_stream(hStream);
  if (s == nullptr) { return CUDA_ERROR_INVALID_HANDLE; }
  s->destroy();
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuStreamDestroy(CUstream hStream) { return cuStreamDestroy_v2(hStream); }

RMM_EMU_EXPORT CUresult cuStreamSynchronize(CUstream h) { return synchronize(h, false); }
RMM_EMU_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream h) { return synchronize(h, true); }
RMM_EMU_EXPORT CUresult cuStreamQuery(CUstream h) { return query(h, false); }
RMM_EMU_EXPORT CUresult cuStreamQuery_ptsz(CUstream h) { return query(h, true); }
RMM_EMU_EXPORT CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned int f) { return wait_event(h, e, f, false); }
RMM_EMU_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream h, CUevent e, unsigned int f)
{
  return wait_event(h, e, f, true);
}
RMM_EMU_EXPORT CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void* data) { return host_func(h, fn, data, false); }
RMM_EMU_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream h, CUhostFn fn, void* data)
{
  return host_func(h, fn, data, true);
}

RMM_EMU_EXPORT CUresult cuStreamAddCallback(CUstream h, CUstreamCallback cb, void* data, unsigned int flags)
{
  return add_callback(h, cb, data, flags, false);
}
RMM_EMU_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream h, CUstreamCallback cb, void* data, unsigned int flags)
{
  return add_callback(h, cb, data, flags, true);
}

RMM_EMU_EXPORT CUresult cuStreamGetFlags(CUstream h, unsigned int* flags)
{
  return get(h, false, flags, [](Stream const& s) { return s.flags(); });
}
RMM_EMU_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream h, unsigned int* flags)
{
  return get(h, true, flags, [](Stream const& s) { return s.flags(); });
}
RMM_EMU_EXPORT CUresult cuStreamGetPriority(CUstream h, int* priority)
{
  return get(h, false, priority, [](Stream const& s) { return s.priority(); });
}
RMM_EMU_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream h, int* priority)
{
  return get(h, true, priority, [](Stream const& s) { return s.priority(); });
}
RMM_EMU_EXPORT CUresult cuStreamGetDevice(CUstream h, CUdevice* dev)
{
  return get(h, false, dev, [](Stream const& s) { return s.context().device().ordinal(); });
}
RMM_EMU_EXPORT CUresult cuStreamGetDevice_ptsz(CUstream h, CUdevice* dev)
{
  return get(h, true, dev, [](Stream const& s) { return s.context().device().ordinal(); });
}
RMM_EMU_EXPORT CUresult cuStreamGetCtx(CUstream h, CUcontext* ctx)
{
  return get(h, false, ctx, [](Stream const& s) { return s.context().handle(); });
}
RMM_EMU_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream h, CUcontext* ctx)
{
  return get(h, true, ctx, [](Stream const& s) { return s.context().handle(); });
}
RMM_EMU_EXPORT CUresult cuStreamGetCtx_v2(CUstream h, CUcontext* ctx, CUgreenCtx* green)
{
  if (green != nullptr) { *green = nullptr; }  // no green contexts here
  return cuStreamGetCtx(h, ctx);
}
RMM_EMU_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream h, CUcontext* ctx, CUgreenCtx* green)
{
  if (green != nullptr) { *green = nullptr; }
  return cuStreamGetCtx_ptsz(h, ctx);
}
namespace {

/// A capturing stream's id is refused, and asking ends its capture (as on an H200).
CUresult stream_id(CUstream h, bool per_thread, unsigned long long* id)
{
  RMM_EMU_RESOLVE(s, h, per_thread);
  if (id == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (s->capture_status() == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
    s->invalidate_capture();
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  *id = static_cast<unsigned long long>(s->id());
  return CUDA_SUCCESS;
}

}  // namespace

RMM_EMU_EXPORT CUresult cuStreamGetId(CUstream h, unsigned long long* id) { return stream_id(h, false, id); }
RMM_EMU_EXPORT CUresult cuStreamGetId_ptsz(CUstream h, unsigned long long* id) { return stream_id(h, true, id); }

namespace {

CUresult begin_capture(CUstream h, bool per_thread, CUstreamCaptureMode mode)
{
  RMM_EMU_RESOLVE(s, h, per_thread);
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (s->kind() == Stream::Kind::legacy) { return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; }
  if (!s->begin_capture()) { return CUDA_ERROR_ILLEGAL_STATE; }
  capture_began(s, mode);
  return CUDA_SUCCESS;
}

/// The graph a capture produced: the emulator builds none, so every capture gets this handle.
CUgraph captured_graph()
{
  static char placeholder;
  return reinterpret_cast<CUgraph>(&placeholder);
}

CUresult end_capture(CUstream h, bool per_thread, CUgraph* graph)
{
  RMM_EMU_RESOLVE(s, h, per_thread);
  if (graph == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  capture_ending(*s);
  capture_ended(*s);
  switch (s->end_capture()) {
    case CU_STREAM_CAPTURE_STATUS_ACTIVE: *graph = captured_graph(); return CUDA_SUCCESS;
    case CU_STREAM_CAPTURE_STATUS_INVALIDATED: *graph = nullptr; return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    default: return CUDA_ERROR_ILLEGAL_STATE;
  }
}

}  // namespace

// CUDA 10.0's ABI, without a mode: its captures are global, the mode CUDA 10.1 made the default.
RMM_EMU_EXPORT CUresult cuStreamBeginCapture(CUstream h)
{
  return begin_capture(h, false, CU_STREAM_CAPTURE_MODE_GLOBAL);
}
RMM_EMU_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream h)
{
  return begin_capture(h, true, CU_STREAM_CAPTURE_MODE_GLOBAL);
}
RMM_EMU_EXPORT CUresult cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode mode)
{
  return begin_capture(h, false, mode);
}
RMM_EMU_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream h, CUstreamCaptureMode mode)
{
  return begin_capture(h, true, mode);
}
RMM_EMU_EXPORT CUresult cuStreamEndCapture(CUstream h, CUgraph* graph) { return end_capture(h, false, graph); }
RMM_EMU_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream h, CUgraph* graph) { return end_capture(h, true, graph); }

RMM_EMU_EXPORT CUresult cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus* status)
{
  return capture_info(h, false, status);
}
RMM_EMU_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream h, CUstreamCaptureStatus* status)
{
  return capture_info(h, true, status);
}

// Not capturing, so the remaining outputs carry nothing; they are left untouched.
RMM_EMU_EXPORT CUresult cuStreamGetCaptureInfo(CUstream h, CUstreamCaptureStatus* status, cuuint64_t*)
{
  return capture_info(h, false, status);
}
RMM_EMU_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream h, CUstreamCaptureStatus* status, cuuint64_t*)
{
  return capture_info(h, true, status);
}
RMM_EMU_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream h,
                                                  CUstreamCaptureStatus* status,
                                                  cuuint64_t*,
                                                  CUgraph*,
                                                  CUgraphNode const**,
                                                  size_t*)
{
  return capture_info(h, false, status);
}
RMM_EMU_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream h,
                                                       CUstreamCaptureStatus* status,
                                                       cuuint64_t*,
                                                       CUgraph*,
                                                       CUgraphNode const**,
                                                       size_t*)
{
  return capture_info(h, true, status);
}
RMM_EMU_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream h,
                                                  CUstreamCaptureStatus* status,
                                                  cuuint64_t*,
                                                  CUgraph*,
                                                  CUgraphNode const**,
                                                  CUgraphEdgeData const**,
                                                  size_t*)
{
  return capture_info(h, false, status);
}
RMM_EMU_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream h,
                                                       CUstreamCaptureStatus* status,
                                                       cuuint64_t*,
                                                       CUgraph*,
                                                       CUgraphNode const**,
                                                       CUgraphEdgeData const**,
                                                       size_t*)
{
  return capture_info(h, true, status);
}

RMM_EMU_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode)
{
  RMM_EMU_REQUIRE_INIT();
  if (mode == nullptr || *mode < CU_STREAM_CAPTURE_MODE_GLOBAL || *mode > CU_STREAM_CAPTURE_MODE_RELAXED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::swap(*mode, thread_capture_mode());
  return CUDA_SUCCESS;
}
