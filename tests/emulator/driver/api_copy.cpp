// SPDX-License-Identifier: Apache-2.0
// Entry points: memcpy and memset, synchronous and stream-ordered, with bounds checks on device memory.
#include "common.hpp"
#include "context.hpp"
#include "memory.hpp"
#include "state.hpp"
#include "stream.hpp"
#include "vmm.hpp"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <shared_mutex>

using namespace rmm_emu;

namespace {

// Synchronous variants run on the legacy stream (the per-thread stream for _ptds) and wait, and
// answer a fault the work met (sticky faults). The work is given the context it runs in.
CUresult submit(CUstream h, bool per_thread, bool sync, std::function<void(Context&)> op)
{
  std::shared_ptr<Stream> s;
  if (auto r = resolve_stream(h, per_thread, s); r != CUDA_SUCCESS) { return r; }
  if (sync && on_stream_worker()) { return CUDA_ERROR_NOT_PERMITTED; }
  auto& ctx      = s->context();
  auto const pos = ctx.enqueue(*s, [&ctx, op = std::move(op)] { op(ctx); });
  if (!sync) { return CUDA_SUCCESS; }
  s->wait(pos);
  return ctx.fault.load();
}

// Work on VMM memory runs with the mappings pinned (vmm_mapping_mutex shared) and checks first that
// they are still there: cuMemUnmap does not wait for queued work. False: it faulted and must not run.
bool still_mapped(Context& ctx, char const* what, RangeInfo const& info, std::uint64_t addr, std::uint64_t bytes)
{
  if (!info.vmm) { return true; }
  std::lock_guard lock(memory_mutex());
  if (vmm_span_mapped(addr, bytes)) { return true; }
  vmm_fault_context(ctx, what, addr, bytes);
  return false;
}

CUresult copy(std::uint64_t dst,
              Side dst_side,
              std::uint64_t src,
              Side src_side,
              std::size_t bytes,
              CUstream h,
              bool per_thread,
              bool sync)
{
  RMM_EMU_REQUIRE_INIT();
  RangeInfo d;
  RangeInfo s;
  if (auto r = check_range(dst, bytes, dst_side, /*write=*/true, &d); r != CUDA_SUCCESS) { return r; }
  if (auto r = check_range(src, bytes, src_side, /*write=*/false, &s); r != CUDA_SUCCESS) { return r; }
  // Host-to-host copies are fully synchronous, even through the Async entry points.
  if (d.host && s.host) { sync = true; }
  if (bytes == 0) {
    std::shared_ptr<Stream> stream;  // still validate the stream
    return resolve_stream(h, per_thread, stream);
  }
  if (d.vmm || s.vmm) {
    return submit(h, per_thread, sync, [dst, src, bytes, d, s](Context& ctx) {
      std::shared_lock pinned(vmm_mapping_mutex());
      if (!still_mapped(ctx, "copy", d, dst, bytes) || !still_mapped(ctx, "copy", s, src, bytes)) { return; }
      std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<void const*>(src), bytes);
    });
  }
  return submit(h, per_thread, sync, [dst, src, bytes](Context&) {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<void const*>(src), bytes);
  });
}

template <class T>
CUresult fill(std::uint64_t dst, T value, std::size_t count, CUstream h, bool per_thread, bool sync)
{
  RMM_EMU_REQUIRE_INIT();
  if (dst % sizeof(T) != 0 || count > SIZE_MAX / sizeof(T)) { return CUDA_ERROR_INVALID_VALUE; }
  std::size_t const bytes = count * sizeof(T);
  RangeInfo info;
  if (auto r = check_range(dst, bytes, Side::device, /*write=*/true, &info); r != CUDA_SUCCESS) { return r; }
  if (count == 0) {
    std::shared_ptr<Stream> s;
    return resolve_stream(h, per_thread, s);
  }
  auto const set = [dst, value, count] {
    if constexpr (sizeof(T) == 1) {
      std::memset(reinterpret_cast<void*>(dst), value, count);
    } else {
      auto* p = reinterpret_cast<T*>(dst);
      for (std::size_t i = 0; i < count; ++i) { p[i] = value; }
    }
  };
  if (info.vmm) {
    return submit(h, per_thread, sync, [set, info, dst, bytes](Context& ctx) {
      std::shared_lock pinned(vmm_mapping_mutex());
      if (still_mapped(ctx, "memset", info, dst, bytes)) { set(); }
    });
  }
  return submit(h, per_thread, sync, [set](Context&) { set(); });
}

std::uint64_t addr(void const* p) { return reinterpret_cast<std::uint64_t>(p); }

CUresult check_peer_contexts(CUcontext a, CUcontext b)
{
  RMM_EMU_REQUIRE_INIT();
  if (Context::from_handle(a) == nullptr || Context::from_handle(b) == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
  return CUDA_SUCCESS;
}

}  // namespace

// ---- unified-address copies (cudaMemcpyDefault) ----
RMM_EMU_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  return copy(dst, Side::any, src, Side::any, n, nullptr, false, true);
}
RMM_EMU_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  return copy(dst, Side::any, src, Side::any, n, nullptr, true, true);
}
RMM_EMU_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  return copy(dst, Side::any, src, Side::any, n, s, false, false);
}
RMM_EMU_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  return copy(dst, Side::any, src, Side::any, n, s, true, false);
}

// ---- peer copies ----
RMM_EMU_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
  if (auto r = check_peer_contexts(dc, sc); r != CUDA_SUCCESS) { return r; }
  return copy(dst, Side::device, src, Side::device, n, nullptr, false, true);
}
RMM_EMU_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
  if (auto r = check_peer_contexts(dc, sc); r != CUDA_SUCCESS) { return r; }
  return copy(dst, Side::device, src, Side::device, n, nullptr, true, true);
}
RMM_EMU_EXPORT CUresult
cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s)
{
  if (auto r = check_peer_contexts(dc, sc); r != CUDA_SUCCESS) { return r; }
  return copy(dst, Side::device, src, Side::device, n, s, false, false);
}
RMM_EMU_EXPORT CUresult
cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s)
{
  if (auto r = check_peer_contexts(dc, sc); r != CUDA_SUCCESS) { return r; }
  return copy(dst, Side::device, src, Side::device, n, s, true, false);
}

// ---- directed copies ----
RMM_EMU_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, void const* src, size_t n)
{
  return copy(dst, Side::device, addr(src), Side::host, n, nullptr, false, true);
}
RMM_EMU_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, void const* src, size_t n)
{
  return copy(dst, Side::device, addr(src), Side::host, n, nullptr, true, true);
}
RMM_EMU_EXPORT CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n)
{
  return copy(addr(dst), Side::host, src, Side::device, n, nullptr, false, true);
}
RMM_EMU_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void* dst, CUdeviceptr src, size_t n)
{
  return copy(addr(dst), Side::host, src, Side::device, n, nullptr, true, true);
}
RMM_EMU_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  return copy(dst, Side::device, src, Side::device, n, nullptr, false, true);
}
RMM_EMU_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  return copy(dst, Side::device, src, Side::device, n, nullptr, true, true);
}
RMM_EMU_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, void const* src, size_t n, CUstream s)
{
  return copy(dst, Side::device, addr(src), Side::host, n, s, false, false);
}
RMM_EMU_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, void const* src, size_t n, CUstream s)
{
  return copy(dst, Side::device, addr(src), Side::host, n, s, true, false);
}
RMM_EMU_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream s)
{
  return copy(addr(dst), Side::host, src, Side::device, n, s, false, false);
}
RMM_EMU_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void* dst, CUdeviceptr src, size_t n, CUstream s)
{
  return copy(addr(dst), Side::host, src, Side::device, n, s, true, false);
}
RMM_EMU_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  return copy(dst, Side::device, src, Side::device, n, s, false, false);
}
RMM_EMU_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  return copy(dst, Side::device, src, Side::device, n, s, true, false);
}

// ---- memset ----
RMM_EMU_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
  return fill(dst, v, n, nullptr, false, true);
}
RMM_EMU_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char v, size_t n)
{
  return fill(dst, v, n, nullptr, true, true);
}
RMM_EMU_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short v, size_t n)
{
  return fill(dst, v, n, nullptr, false, true);
}
RMM_EMU_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr dst, unsigned short v, size_t n)
{
  return fill(dst, v, n, nullptr, true, true);
}
RMM_EMU_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int v, size_t n)
{
  return fill(dst, v, n, nullptr, false, true);
}
RMM_EMU_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int v, size_t n)
{
  return fill(dst, v, n, nullptr, true, true);
}
RMM_EMU_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
  return fill(dst, v, n, s, false, false);
}
RMM_EMU_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
  return fill(dst, v, n, s, true, false);
}
RMM_EMU_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s)
{
  return fill(dst, v, n, s, false, false);
}
RMM_EMU_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short v, size_t n, CUstream s)
{
  return fill(dst, v, n, s, true, false);
}
RMM_EMU_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s)
{
  return fill(dst, v, n, s, false, false);
}
RMM_EMU_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int v, size_t n, CUstream s)
{
  return fill(dst, v, n, s, true, false);
}
