// SPDX-License-Identifier: Apache-2.0
// Runtime API: events, plus their _ptsz exports.
#include "rt.hpp"

using namespace rmm_emu::rt;

namespace {

Driver const& D() { return driver(); }

cudaError_t record_event(cudaEvent_t e, cudaStream_t s, unsigned flags, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().eventRecordWithFlags(pt)(e, s, flags));
}

}  // namespace

// cudaEvent* flags carry the same bits as CU_EVENT_*.
RMM_RT_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int flags)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().eventCreate(e, flags));
}
RMM_RT_EXPORT cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }

RMM_RT_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().eventRecord.legacy(e, s));
}
RMM_RT_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().eventRecord.per_thread(e, s));
}
RMM_RT_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int flags)
{
  return record_event(e, s, flags, false);
}
RMM_RT_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t e, cudaStream_t s, unsigned int flags)
{
  return record_event(e, s, flags, true);
}

RMM_RT_EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().eventQuery(e));
}

RMM_RT_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().eventSynchronize(e));
}

RMM_RT_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().eventDestroy(e));
}

RMM_RT_EXPORT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().eventElapsedTime(ms, start, end));
}
