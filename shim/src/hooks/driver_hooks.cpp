// SPDX-License-Identifier: Apache-2.0
// The driver-level wrappers: translate, then let the dispatcher decide.

#include "driver/wrappers.hpp"

#include "serving/default_pool_calls.hpp"
#include "serving/dispatch.hpp"
#include "driver/hook_table.hpp"
#include "driver/real_driver.hpp"
#include "settings.hpp"
#include "visibility.hpp"

namespace {

using rmm::shim::pass_reason;
using rmm::shim::pass_through;
using rmm::shim::real;
constexpr auto default_stream = rmm::shim::stream_flavour::default_stream;
constexpr auto per_thread     = rmm::shim::stream_flavour::per_thread;

/// Hands out the wrapper instead of what the real resolver found, when the shim wraps it. An entry
/// point that may submit work and is handed out as the driver's own ends the watch of the streams.
void substitute(char const* symbol, void** pfn, int version, cuuint64_t flags)
{
  if (pfn == nullptr || *pfn == nullptr || symbol == nullptr || !rmm::shim::settings().enabled) { return; }
  auto const* entry = rmm::shim::wrapper_for_proc(symbol, version, flags);
  if (entry != nullptr && rmm::shim::wraps(*entry, *pfn)) {
    *pfn = entry->wrapper;
    rmm::shim::note_installed(*entry, rmm::shim::found_through::get_proc_address);
    return;
  }
  if (rmm::shim::may_submit_work(symbol)) {
    bool const per_thread_flavour = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    rmm::shim::note_unwatched_entry_point(symbol, version,
                                          per_thread_flavour ? "cuGetProcAddress, per-thread" : "cuGetProcAddress");
  }
}

/// An allocation of `bytes` the shim only counts: the driver's function (CUDA_ERROR_NOT_SUPPORTED
/// when it has none), counted under `reason` when it succeeds.
template <class Fn, class... Args>
CUresult counted_pass_by(rmm::shim::pass_reason reason, std::size_t bytes, Fn real_function, Args... args)
{
  if (real_function == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  return rmm::shim::passed_by(reason, bytes, [&] { return real_function(args...); });
}

/// cuMemAllocFromPoolAsync in either flavour: a device's default pool is served by its stack;
/// any other pool is the program's own and passes by, counted.
template <class Fn>
CUresult allocate_from_pool(Fn real_function,
                            CUdeviceptr* dptr,
                            std::size_t bytes,
                            CUmemoryPool pool,
                            CUstream stream,
                            rmm::shim::stream_flavour flavour)
{
  auto const attempt = rmm::shim::serve_pool_allocation(dptr, bytes, pool, stream, flavour);
  if (attempt.served) { return *attempt.served; }
  if (!attempt.default_pool) {
    return counted_pass_by(pass_reason::program_pool, bytes, real_function, dptr, bytes, pool, stream);
  }
  if (real_function == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  return pass_through([&] { return real_function(dptr, bytes, pool, stream); });  // counted by the async path
}

}  // namespace

RMM_SHIM_EXPORT CUresult legacy_cuGetProcAddress(char const* symbol, void** pfn, int version, cuuint64_t flags)
{
  auto const result = real()->get_proc_address(symbol, pfn, version, flags);
  if (result == CUDA_SUCCESS) { substitute(symbol, pfn, version, flags); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuGetProcAddress_v2(char const* symbol,
                                             void** pfn,
                                             int version,
                                             cuuint64_t flags,
                                             CUdriverProcAddressQueryResult* status)
{
  CUdriverProcAddressQueryResult found{};
  auto const result = real()->get_proc_address_v2(symbol, pfn, version, flags, &found);
  if (status != nullptr) { *status = found; }
  if (result == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS) { substitute(symbol, pfn, version, flags); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, std::size_t bytes)
{
  if (auto served = rmm::shim::serve_allocation(dptr, bytes)) { return *served; }
  return pass_through([&] { return real()->mem_alloc(dptr, bytes); });
}

RMM_SHIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
  // The driver's own free calls no wrapper: no pass-through scope is needed.
  if (rmm::shim::foreign_free(dptr)) { return real()->mem_free(dptr); }
  if (auto served = rmm::shim::serve_free(dptr)) { return *served; }
  return pass_through([&] { return real()->mem_free(dptr); });
}

RMM_SHIM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, std::size_t bytes, CUstream stream)
{
  if (auto served = rmm::shim::serve_async_allocation(dptr, bytes, stream, default_stream)) { return *served; }
  return pass_through([&] { return real()->mem_alloc_async(dptr, bytes, stream); });
}

RMM_SHIM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUstream stream)
{
  if (auto served = rmm::shim::serve_async_allocation(dptr, bytes, stream, per_thread)) { return *served; }
  return pass_through([&] { return real()->mem_alloc_async_ptsz(dptr, bytes, stream); });
}

RMM_SHIM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
  if (auto served = rmm::shim::serve_async_free(dptr, stream, default_stream)) { return *served; }
  return pass_through([&] { return real()->mem_free_async(dptr, stream); });
}

RMM_SHIM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
  if (auto served = rmm::shim::serve_async_free(dptr, stream, per_thread)) { return *served; }
  return pass_through([&] { return real()->mem_free_async_ptsz(dptr, stream); });
}

RMM_SHIM_EXPORT CUresult cuMemGetInfo_v2(std::size_t* free, std::size_t* total)
{
  auto const result = pass_through([&] { return real()->mem_get_info(free, total); });
  if (result == CUDA_SUCCESS) { rmm::shim::adjust_memory_info(free, total); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, std::size_t* size, CUdeviceptr dptr)
{
  if (auto served = rmm::shim::serve_address_range(base, size, dptr)) { return *served; }
  return pass_through([&] { return real()->mem_get_address_range(base, size, dptr); });
}

RMM_SHIM_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle* handle, CUdeviceptr dptr)
{
  if (auto served = rmm::shim::serve_ipc_export(handle, dptr)) { return *served; }
  auto const ipc = real()->ipc_get_mem_handle;
  return ipc == nullptr ? CUDA_ERROR_NOT_SUPPORTED : pass_through([&] { return ipc(handle, dptr); });
}

RMM_SHIM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, std::size_t bytes, unsigned int flags)
{
  return counted_pass_by(pass_reason::managed, bytes, real()->mem_alloc_managed, dptr, bytes, flags);
}

RMM_SHIM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr,
                                                 std::size_t bytes,
                                                 CUmemoryPool pool,
                                                 CUstream stream)
{
  return allocate_from_pool(real()->mem_alloc_from_pool_async, dptr, bytes, pool, stream, default_stream);
}

RMM_SHIM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr,
                                                      std::size_t bytes,
                                                      CUmemoryPool pool,
                                                      CUstream stream)
{
  return allocate_from_pool(real()->mem_alloc_from_pool_async_ptsz, dptr, bytes, pool, stream, per_thread);
}

// A default pool's usage includes its stack's; the pool itself keeps every setting.
RMM_SHIM_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute, void* value)
{
  auto const get = real()->mem_pool_get_attribute;
  if (get == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto const result = pass_through([&] { return get(pool, attribute, value); });
  if (result == CUDA_SUCCESS) { rmm::shim::adjust_pool_attribute(pool, attribute, value); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute, void* value)
{
  auto const set = real()->mem_pool_set_attribute;
  if (set == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto const result = pass_through([&] { return set(pool, attribute, value); });
  if (result == CUDA_SUCCESS) { rmm::shim::note_pool_attribute_set(pool, attribute); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, std::size_t keep)
{
  auto const trim = real()->mem_pool_trim_to;
  if (trim == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto const result = pass_through([&] { return trim(pool, keep); });
  if (result == CUDA_SUCCESS) { rmm::shim::trim_default_pool(pool, keep); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuDeviceSetMemPool(CUdevice device, CUmemoryPool pool)
{
  auto const result = pass_through([&] { return real()->device_set_mem_pool(device, pool); });
  if (result == CUDA_SUCCESS) { rmm::shim::note_device_mem_pool_set(device, pool); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int flags)
{
  auto const result = pass_through([&] { return real()->stream_create(stream, flags); });
  if (result == CUDA_SUCCESS) { rmm::shim::note_stream_created(*stream, flags); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int priority)
{
  auto const result = pass_through([&] { return real()->stream_create_with_priority(stream, flags, priority); });
  if (result == CUDA_SUCCESS) { rmm::shim::note_stream_created(*stream, flags); }
  return result;
}

// A green context's streams are non-blocking, on the device of the green context.
RMM_SHIM_EXPORT CUresult cuGreenCtxStreamCreate(CUstream* stream, CUgreenCtx green, unsigned int flags, int priority)
{
  auto const create = real()->green_ctx_stream_create;
  if (create == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto const result = pass_through([&] { return create(stream, green, flags, priority); });
  if (result == CUDA_SUCCESS) { rmm::shim::note_stream_created(*stream, flags | CU_STREAM_NON_BLOCKING); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuStreamDestroy_v2(CUstream stream)
{
  rmm::shim::note_stream_destroyed(stream);  // before: the handle may be reused at once
  return pass_through([&] { return real()->stream_destroy(stream); });
}

// Noted before the capture begins: an epoch closing meanwhile would record on the legacy stream.
RMM_SHIM_EXPORT CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode)
{
  rmm::shim::note_capture_beginning(stream, default_stream);
  auto const result = pass_through([&] { return real()->stream_begin_capture(stream, mode); });
  rmm::shim::note_capture_ended(stream, default_stream);  // a capture that did not begin; one that did stays counted
  return result;
}

// The first ABI (CUDA 10.0, no mode argument): the runtime resolves it too, so it must be
// wrapped for the shim to keep seeing every capture.

// The first ABI (CUDA 10.0, no mode argument): the runtime resolves it too, so it must be
// wrapped for the shim to keep seeing every capture.
RMM_SHIM_EXPORT CUresult legacy_cuStreamBeginCapture(CUstream stream)
{
  auto const begin = real()->stream_begin_capture_v1;
  if (begin == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  rmm::shim::note_capture_beginning(stream, default_stream);
  auto const result = pass_through([&] { return begin(stream); });
  rmm::shim::note_capture_ended(stream, default_stream);
  return result;
}

RMM_SHIM_EXPORT CUresult legacy_cuStreamBeginCapture_ptsz(CUstream stream)
{
  auto const begin = real()->stream_begin_capture_v1_ptsz;
  if (begin == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  rmm::shim::note_capture_beginning(stream, per_thread);
  auto const result = pass_through([&] { return begin(stream); });
  rmm::shim::note_capture_ended(stream, per_thread);
  return result;
}

RMM_SHIM_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream stream, CUstreamCaptureMode mode)
{
  rmm::shim::note_capture_beginning(stream, per_thread);
  auto const result = pass_through([&] { return real()->stream_begin_capture_ptsz(stream, mode); });
  rmm::shim::note_capture_ended(stream, per_thread);
  return result;
}

RMM_SHIM_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream stream,
                                                     CUgraph graph,
                                                     CUgraphNode const* dependencies,
                                                     CUgraphEdgeData const* edges,
                                                     std::size_t count,
                                                     CUstreamCaptureMode mode)
{
  auto const begin = real()->stream_begin_capture_to_graph;
  if (begin == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  rmm::shim::note_capture_beginning(stream, default_stream);
  auto const result = pass_through([&] { return begin(stream, graph, dependencies, edges, count, mode); });
  rmm::shim::note_capture_ended(stream, default_stream);
  return result;
}

RMM_SHIM_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream stream,
                                                          CUgraph graph,
                                                          CUgraphNode const* dependencies,
                                                          CUgraphEdgeData const* edges,
                                                          std::size_t count,
                                                          CUstreamCaptureMode mode)
{
  auto const begin = real()->stream_begin_capture_to_graph_ptsz;
  if (begin == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  rmm::shim::note_capture_beginning(stream, per_thread);
  auto const result = pass_through([&] { return begin(stream, graph, dependencies, edges, count, mode); });
  rmm::shim::note_capture_ended(stream, per_thread);
  return result;
}

RMM_SHIM_EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph)
{
  auto const result = pass_through([&] { return real()->stream_end_capture(stream, graph); });
  rmm::shim::note_capture_ended(stream, default_stream);
  return result;
}

RMM_SHIM_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph)
{
  auto const result = pass_through([&] { return real()->stream_end_capture_ptsz(stream, graph); });
  rmm::shim::note_capture_ended(stream, per_thread);
  return result;
}

// Forgotten after the reset: until it returns, the device's memory is still there.
RMM_SHIM_EXPORT CUresult legacy_cuDevicePrimaryCtxReset(CUdevice device)
{
  auto const reset = real()->primary_ctx_reset_v1;
  if (reset == nullptr) { return CUDA_ERROR_NOT_SUPPORTED; }
  auto const result = pass_through([&] { return reset(device); });
  if (result == CUDA_SUCCESS) { rmm::shim::note_device_reset(device); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice device)
{
  auto const result = pass_through([&] { return real()->primary_ctx_reset(device); });
  if (result == CUDA_SUCCESS) { rmm::shim::note_device_reset(device); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
  auto const result = pass_through([&] { return real()->pointer_get_attribute(data, attribute, ptr); });
  if (result == CUDA_SUCCESS) { rmm::shim::adjust_pointer_attribute(data, attribute, ptr); }
  return result;
}

RMM_SHIM_EXPORT CUresult cuPointerGetAttributes(unsigned int count,
                                                CUpointer_attribute* attributes,
                                                void** data,
                                                CUdeviceptr ptr)
{
  auto const result = pass_through([&] { return real()->pointer_get_attributes(count, attributes, data, ptr); });
  if (result == CUDA_SUCCESS && attributes != nullptr && data != nullptr) {
    for (unsigned int i = 0; i < count; ++i) { rmm::shim::adjust_pointer_attribute(data[i], attributes[i], ptr); }
  }
  return result;
}

RMM_SHIM_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* dptr, CUipcMemHandle handle, unsigned int flags)
{
  if (auto served = rmm::shim::serve_ipc_open(dptr, handle, flags)) { return *served; }
  auto const open = real()->ipc_open_mem_handle;
  return open == nullptr ? CUDA_ERROR_NOT_SUPPORTED : pass_through([&] { return open(dptr, handle, flags); });
}

RMM_SHIM_EXPORT CUresult legacy_cuIpcOpenMemHandle(CUdeviceptr* dptr, CUipcMemHandle handle, unsigned int flags)
{
  if (auto served = rmm::shim::serve_ipc_open(dptr, handle, flags)) { return *served; }
  auto const open = real()->ipc_open_mem_handle_v1;
  return open == nullptr ? CUDA_ERROR_NOT_SUPPORTED : pass_through([&] { return open(dptr, handle, flags); });
}

RMM_SHIM_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
  if (auto served = rmm::shim::serve_ipc_close(dptr)) { return *served; }
  auto const close = real()->ipc_close_mem_handle;
  return close == nullptr ? CUDA_ERROR_NOT_SUPPORTED : pass_through([&] { return close(dptr); });
}
