// SPDX-License-Identifier: Apache-2.0
// Entry points: devices, primary contexts, the context stack, peer access.
#include "common.hpp"
#include "capture.hpp"
#include "context.hpp"
#include "device.hpp"
#include "memory.hpp"
#include "mempool.hpp"
#include "reset.hpp"
#include "state.hpp"
#include "stream.hpp"

#include <cstring>
#include <mutex>

using namespace rmm_emu;

namespace {

// Blocking calls from a host function would wait for the stream running it.
CUresult sync_context(Context& ctx)
{
  if (on_stream_worker()) { return CUDA_ERROR_NOT_PERMITTED; }
  // Whatever the capture mode: a capture cannot wait for its own work.
  if (invalidate_captures(ctx)) { return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; }
  ctx.synchronize();
  if (auto const fault = ctx.fault.load(); fault != CUDA_SUCCESS) { return fault; }
  trim_pools_at_sync(ctx.device());
  return CUDA_SUCCESS;
}

constexpr unsigned kCtxFlagsMask = 0xff;  // CU_CTX_SCHED_* | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX | ...

}  // namespace

RMM_EMU_EXPORT CUresult cuDeviceGet(CUdevice* dev, int ordinal)
{
  RMM_EMU_REQUIRE_INIT();
  if (dev == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (device(ordinal) == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  *dev = ordinal;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDeviceGetCount(int* count)
{
  RMM_EMU_REQUIRE_INIT();
  if (count == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  *count = device_count();
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  if (name == nullptr || len <= 0) { return CUDA_ERROR_INVALID_VALUE; }
  if (device(dev) == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  std::strncpy(name, kDeviceName, static_cast<std::size_t>(len));
  name[len - 1] = '\0';
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  if (bytes == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  *bytes = d->capacity();
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attrib, CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  if (value == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  return device_attribute(value, attrib, *d);
}

RMM_EMU_EXPORT CUresult cuDeviceCanAccessPeer(int* can, CUdevice dev, CUdevice peer)
{
  RMM_EMU_REQUIRE_INIT();
  if (can == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (device(dev) == nullptr || device(peer) == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  *can = dev != peer ? 1 : 0;  // all emulated devices share host memory
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  if (uuid == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (device(dev) == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  static constexpr char kPrefix[] = "rmm-emulator-";  // 13 bytes, then the ordinal
  std::memset(uuid->bytes, 0, sizeof(uuid->bytes));
  std::memcpy(uuid->bytes, kPrefix, sizeof(kPrefix) - 1);
  uuid->bytes[15] = static_cast<char>(dev);
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

RMM_EMU_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  if (pctx == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  Context& ctx = d->primary();
  std::lock_guard lock(ctx.state_mutex);
  ++ctx.retain_count;
  *pctx = ctx.handle();
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  Context& ctx = d->primary();
  std::lock_guard lock(ctx.state_mutex);
  if (ctx.retain_count == 0) { return CUDA_ERROR_INVALID_CONTEXT; }
  // The context's resources stay alive at zero: unlike a GPU, dropping them would gain nothing.
  --ctx.retain_count;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

RMM_EMU_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active)
{
  RMM_EMU_REQUIRE_INIT();
  if (flags == nullptr || active == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  Context& ctx = d->primary();
  std::lock_guard lock(ctx.state_mutex);
  *flags  = ctx.flags;
  *active = ctx.retain_count > 0 ? 1 : 0;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
  RMM_EMU_REQUIRE_INIT();
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  if ((flags & ~kCtxFlagsMask) != 0 || (flags & CU_CTX_SCHED_MASK) > CU_CTX_SCHED_BLOCKING_SYNC) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Context& ctx = d->primary();
  std::lock_guard lock(ctx.state_mutex);
  ctx.flags = flags;
  return CUDA_SUCCESS;
}

// Before CUDA 11 the flags could not change while the context was active.
RMM_EMU_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
  RMM_EMU_REQUIRE_INIT();
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  {
    std::lock_guard lock(d->primary().state_mutex);
    if (d->primary().retain_count > 0) { return CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE; }
  }
  return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

RMM_EMU_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  if (on_stream_worker()) { return CUDA_ERROR_NOT_PERMITTED; }
  reset_device(*d);
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }

RMM_EMU_EXPORT CUresult cuCtxGetCurrent(CUcontext* pctx)
{
  RMM_EMU_REQUIRE_INIT();
  if (pctx == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  Context* ctx = current_context();
  *pctx        = ctx != nullptr ? ctx->handle() : nullptr;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuCtxSetCurrent(CUcontext handle)
{
  RMM_EMU_REQUIRE_INIT();
  if (handle == nullptr) {
    set_current_context(nullptr);
    return CUDA_SUCCESS;
  }
  Context* ctx = Context::from_handle(handle);
  if (ctx == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
  set_current_context(ctx);
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext handle)
{
  RMM_EMU_REQUIRE_INIT();
  Context* ctx = Context::from_handle(handle);
  if (ctx == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
  push_current_context(ctx);
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuCtxPushCurrent(CUcontext handle) { return cuCtxPushCurrent_v2(handle); }

RMM_EMU_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* pctx)
{
  RMM_EMU_REQUIRE_INIT();
  Context* ctx = pop_current_context();
  if (ctx == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
  if (pctx != nullptr) { *pctx = ctx->handle(); }
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuCtxPopCurrent(CUcontext* pctx) { return cuCtxPopCurrent_v2(pctx); }

RMM_EMU_EXPORT CUresult cuCtxGetDevice(CUdevice* dev)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  if (dev == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  *dev = ctx->device().ordinal();
  return CUDA_SUCCESS;
}

// CUDA 13: an explicit context, or the current one when null.
RMM_EMU_EXPORT CUresult cuCtxGetDevice_v2(CUdevice* dev, CUcontext handle)
{
  if (handle == nullptr) { return cuCtxGetDevice(dev); }
  RMM_EMU_REQUIRE_INIT();
  Context* ctx = Context::from_handle(handle);
  if (ctx == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
  if (dev == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  *dev = ctx->device().ordinal();
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuCtxSynchronize(void)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  return sync_context(*ctx);
}

RMM_EMU_EXPORT CUresult cuCtxSynchronize_v2(CUcontext handle)
{
  if (handle == nullptr) { return cuCtxSynchronize(); }
  RMM_EMU_REQUIRE_INIT();
  Context* ctx = Context::from_handle(handle);
  if (ctx == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
  return sync_context(*ctx);
}

RMM_EMU_EXPORT CUresult cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  (void)ctx;
  if (leastPriority != nullptr) { *leastPriority = 0; }
  if (greatestPriority != nullptr) { *greatestPriority = -5; }  // the H200's range
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer_handle, unsigned int flags)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  if (flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  Context* peer = Context::from_handle(peer_handle);
  if (peer == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
  if (peer == ctx) { return CUDA_ERROR_INVALID_DEVICE; }
  std::lock_guard lock(ctx->state_mutex);
  if (!ctx->peers.insert(peer).second) { return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED; }
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peer_handle)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  Context* peer = Context::from_handle(peer_handle);
  if (peer == nullptr) { return CUDA_ERROR_INVALID_CONTEXT; }
  std::lock_guard lock(ctx->state_mutex);
  if (ctx->peers.erase(peer) == 0) { return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED; }
  return CUDA_SUCCESS;
}
