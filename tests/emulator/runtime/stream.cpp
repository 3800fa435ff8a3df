// SPDX-License-Identifier: Apache-2.0
// Runtime API: streams, host functions, capture queries, plus their _ptsz exports.
#include "rt.hpp"

#include <memory>

using namespace rmm_emu::rt;

namespace {

Driver const& D() { return driver(); }

cudaError_t synchronize(cudaStream_t s, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamSynchronize(pt)(s));
}

cudaError_t query(cudaStream_t s, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamQuery(pt)(s));
}

cudaError_t wait_event(cudaStream_t s, cudaEvent_t e, unsigned flags, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamWaitEvent(pt)(s, e, flags));
}

cudaError_t host_func(cudaStream_t s, cudaHostFn_t fn, void* data, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().launchHostFunc(pt)(s, fn, data));
}

// cudaStreamCallback_t takes a cudaError_t where CUstreamCallback takes a CUresult: bridge them.
struct Callback {
  cudaStreamCallback_t fn;
  void* data;
};

void CUDA_CB run_callback(CUstream s, CUresult status, void* p)
{
  std::unique_ptr<Callback> cb{static_cast<Callback*>(p)};
  cb->fn(s, to_runtime(status), cb->data);
}

cudaError_t add_callback(cudaStream_t s, cudaStreamCallback_t fn, void* data, unsigned flags, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  if (fn == nullptr || flags != 0) { return record(cudaErrorInvalidValue); }
  auto cb      = std::make_unique<Callback>(Callback{fn, data});
  auto const e = result(D().streamAddCallback(pt)(s, run_callback, cb.get(), 0));
  if (e == cudaSuccess) { cb.release(); }  // the callback owns it now
  return e;
}

template <class T, class F>
cudaError_t get(F fn, cudaStream_t s, T* out)
{
  RMM_RT_ENTER_CONTEXT();
  return result(fn(s, out));
}

cudaError_t is_capturing(cudaStream_t s, cudaStreamCaptureStatus* status, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamIsCapturing(pt)(s, reinterpret_cast<CUstreamCaptureStatus*>(status)));
}

cudaError_t capture_info(cudaStream_t s,
                         cudaStreamCaptureStatus* status,
                         unsigned long long* id,
                         cudaGraph_t* graph,
                         cudaGraphNode_t const** deps,
                         cudaGraphEdgeData const** edges,
                         size_t* count,
                         bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamGetCaptureInfo(pt)(s, reinterpret_cast<CUstreamCaptureStatus*>(status),
                                             reinterpret_cast<cuuint64_t*>(id), graph, deps,
                                             reinterpret_cast<CUgraphEdgeData const**>(edges), count));
}

}  // namespace

RMM_RT_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int flags, int priority)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamCreateWithPriority(s, flags, priority));
}
RMM_RT_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamCreate(s, flags));
}
RMM_RT_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

RMM_RT_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamDestroy(s));
}

RMM_RT_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s) { return synchronize(s, false); }
RMM_RT_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s) { return synchronize(s, true); }
RMM_RT_EXPORT cudaError_t cudaStreamQuery(cudaStream_t s) { return query(s, false); }
RMM_RT_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t s) { return query(s, true); }
RMM_RT_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
  return wait_event(s, e, flags, false);
}
RMM_RT_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
  return wait_event(s, e, flags, true);
}
RMM_RT_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* data)
{
  return host_func(s, fn, data, false);
}
RMM_RT_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t s, cudaHostFn_t fn, void* data)
{
  return host_func(s, fn, data, true);
}

RMM_RT_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t fn, void* data, unsigned int flags)
{
  return add_callback(s, fn, data, flags, false);
}
RMM_RT_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t s,
                                                     cudaStreamCallback_t fn,
                                                     void* data,
                                                     unsigned int flags)
{
  return add_callback(s, fn, data, flags, true);
}

RMM_RT_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int* flags)
{
  return get(D().streamGetFlags.legacy, s, flags);
}
RMM_RT_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t s, unsigned int* flags)
{
  return get(D().streamGetFlags.per_thread, s, flags);
}
RMM_RT_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t s, int* p)
{
  return get(D().streamGetPriority.legacy, s, p);
}
RMM_RT_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t s, int* p)
{
  return get(D().streamGetPriority.per_thread, s, p);
}
RMM_RT_EXPORT cudaError_t cudaStreamGetDevice(cudaStream_t s, int* d) { return get(D().streamGetDevice.legacy, s, d); }
RMM_RT_EXPORT cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t s, int* d)
{
  return get(D().streamGetDevice.per_thread, s, d);
}
RMM_RT_EXPORT cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long* id)
{
  return get(D().streamGetId.legacy, s, id);
}
RMM_RT_EXPORT cudaError_t cudaStreamGetId_ptsz(cudaStream_t s, unsigned long long* id)
{
  return get(D().streamGetId.per_thread, s, id);
}

RMM_RT_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamBeginCapture.legacy(s, static_cast<CUstreamCaptureMode>(mode)));
}
RMM_RT_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t s, cudaStreamCaptureMode mode)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamBeginCapture.per_thread(s, static_cast<CUstreamCaptureMode>(mode)));
}
RMM_RT_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamEndCapture.legacy(s, reinterpret_cast<CUgraph*>(graph)));
}
RMM_RT_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t s, cudaGraph_t* graph)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().streamEndCapture.per_thread(s, reinterpret_cast<CUgraph*>(graph)));
}

RMM_RT_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status)
{
  return is_capturing(s, status, false);
}
RMM_RT_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t s, cudaStreamCaptureStatus* status)
{
  return is_capturing(s, status, true);
}

RMM_RT_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s,
                                                   cudaStreamCaptureStatus* status,
                                                   unsigned long long* id,
                                                   cudaGraph_t* graph,
                                                   cudaGraphNode_t const** deps,
                                                   cudaGraphEdgeData const** edges,
                                                   size_t* count)
{
  return capture_info(s, status, id, graph, deps, edges, count, false);
}
RMM_RT_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t s,
                                                        cudaStreamCaptureStatus* status,
                                                        unsigned long long* id,
                                                        cudaGraph_t* graph,
                                                        cudaGraphNode_t const** deps,
                                                        cudaGraphEdgeData const** edges,
                                                        size_t* count)
{
  return capture_info(s, status, id, graph, deps, edges, count, true);
}

RMM_RT_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode)
{
  RMM_RT_ENTER();
  return result(D().threadExchangeStreamCaptureMode(reinterpret_cast<CUstreamCaptureMode*>(mode)));
}
