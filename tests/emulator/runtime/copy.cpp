// SPDX-License-Identifier: Apache-2.0
// Runtime API: memcpy and memset, plus their per-thread-default-stream (_ptds/_ptsz) exports.
#include "rt.hpp"

using namespace rmm_emu::rt;

namespace {

Driver const& D() { return driver(); }

CUdeviceptr dptr(void const* p) { return reinterpret_cast<CUdeviceptr>(p); }

// Host-to-host copies must not be handed device memory.
bool device_only(void const* p)
{
  CUmemorytype type{};
  int managed                 = 0;
  CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
  void* data[]                = {&type, &managed};
  D().pointerGetAttributes(2, which, data, dptr(p));
  return type == CU_MEMORYTYPE_DEVICE && managed == 0;
}

// cudaMemcpyKind picks the driver entry point; the driver validates the pointers against it.
cudaError_t copy(void* dst, void const* src, size_t count, cudaMemcpyKind kind, cudaStream_t s, bool pt, bool async)
{
  RMM_RT_ENTER_CONTEXT();
  CUresult r = CUDA_SUCCESS;
  switch (kind) {
    case cudaMemcpyHostToHost:
      if (count != 0 && (device_only(dst) || device_only(src))) { return record(cudaErrorInvalidValue); }
      [[fallthrough]];
    case cudaMemcpyDefault:
      r = async ? D().memcpyAsync(pt)(dptr(dst), dptr(src), count, s) : D().memcpy(pt)(dptr(dst), dptr(src), count);
      break;
    case cudaMemcpyHostToDevice:
      r = async ? D().memcpyHtoDAsync(pt)(dptr(dst), src, count, s) : D().memcpyHtoD(pt)(dptr(dst), src, count);
      break;
    case cudaMemcpyDeviceToHost:
      r = async ? D().memcpyDtoHAsync(pt)(dst, dptr(src), count, s) : D().memcpyDtoH(pt)(dst, dptr(src), count);
      break;
    case cudaMemcpyDeviceToDevice:
      r = async ? D().memcpyDtoDAsync(pt)(dptr(dst), dptr(src), count, s)
                : D().memcpyDtoD(pt)(dptr(dst), dptr(src), count);
      break;
    default: return record(cudaErrorInvalidMemcpyDirection);
  }
  return result(r);
}

cudaError_t set(void* p, int value, size_t count, cudaStream_t s, bool pt, bool async)
{
  RMM_RT_ENTER_CONTEXT();
  auto const byte = static_cast<unsigned char>(value);
  return result(async ? D().memsetD8Async(pt)(dptr(p), byte, count, s) : D().memsetD8(pt)(dptr(p), byte, count));
}

cudaError_t peer_contexts(int dst_device, int src_device, CUcontext& dc, CUcontext& sc)
{
  if (auto r = D().primaryCtxRetain(&dc, dst_device); r != CUDA_SUCCESS) { return to_runtime(r); }
  D().primaryCtxRelease(dst_device);
  if (auto r = D().primaryCtxRetain(&sc, src_device); r != CUDA_SUCCESS) { return to_runtime(r); }
  D().primaryCtxRelease(src_device);
  return cudaSuccess;
}

}  // namespace

RMM_RT_EXPORT cudaError_t cudaMemcpy(void* dst, void const* src, size_t count, cudaMemcpyKind kind)
{
  return copy(dst, src, count, kind, nullptr, false, false);
}
RMM_RT_EXPORT cudaError_t cudaMemcpy_ptds(void* dst, void const* src, size_t count, cudaMemcpyKind kind)
{
  return copy(dst, src, count, kind, nullptr, true, false);
}
RMM_RT_EXPORT cudaError_t
cudaMemcpyAsync(void* dst, void const* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
  return copy(dst, src, count, kind, stream, false, true);
}
RMM_RT_EXPORT cudaError_t
cudaMemcpyAsync_ptsz(void* dst, void const* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
  return copy(dst, src, count, kind, stream, true, true);
}

RMM_RT_EXPORT cudaError_t cudaMemset(void* devPtr, int value, size_t count)
{
  return set(devPtr, value, count, nullptr, false, false);
}
RMM_RT_EXPORT cudaError_t cudaMemset_ptds(void* devPtr, int value, size_t count)
{
  return set(devPtr, value, count, nullptr, true, false);
}
RMM_RT_EXPORT cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream)
{
  return set(devPtr, value, count, stream, false, true);
}
RMM_RT_EXPORT cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream)
{
  return set(devPtr, value, count, stream, true, true);
}

RMM_RT_EXPORT cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, void const* src, int srcDevice, size_t count)
{
  RMM_RT_ENTER_CONTEXT();
  CUcontext dc = nullptr;
  CUcontext sc = nullptr;
  if (auto e = peer_contexts(dstDevice, srcDevice, dc, sc); e != cudaSuccess) { return record(e); }
  return result(D().memcpyPeer.legacy(dptr(dst), dc, dptr(src), sc, count));
}

RMM_RT_EXPORT cudaError_t
cudaMemcpyPeerAsync(void* dst, int dstDevice, void const* src, int srcDevice, size_t count, cudaStream_t stream)
{
  RMM_RT_ENTER_CONTEXT();
  CUcontext dc = nullptr;
  CUcontext sc = nullptr;
  if (auto e = peer_contexts(dstDevice, srcDevice, dc, sc); e != cudaSuccess) { return record(e); }
  return result(D().memcpyPeerAsync.legacy(dptr(dst), dc, dptr(src), sc, count, stream));
}
