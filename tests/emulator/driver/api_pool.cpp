// SPDX-License-Identifier: Apache-2.0
// Entry points: stream-ordered allocation and memory pools.
#include "common.hpp"
#include "capture.hpp"
#include "config.hpp"
#include "context.hpp"
#include "device.hpp"
#include "memory.hpp"
#include "mempool.hpp"
#include "state.hpp"
#include "stream.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

using namespace rmm_emu;

namespace {

unsigned const kSupportedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;

// `pick` names the pool under the lock, so a concurrent cuMemPoolDestroy cannot free it in between.
template <class PickPool>
CUresult alloc_async(CUdeviceptr* dptr, size_t bytes, Stream const& s, PickPool&& pick)
{
  if (s.capture_status() == CU_STREAM_CAPTURE_STATUS_NONE && !unsafe_call_allowed(s.context())) {
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (inject_allocation_failure(bytes)) { return CUDA_ERROR_OUT_OF_MEMORY; }
  std::lock_guard lock(memory_mutex());
  Pool* pool = pick();
  if (pool == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (bytes > pool->device().capacity()) { return CUDA_ERROR_OUT_OF_MEMORY; }
  std::uint64_t addr = 0;
  if (auto r = pool->allocate(bytes, s, addr); r != CUDA_SUCCESS) { return r; }
  if (auto* a = find_allocation(addr)) { a->captured_in = capture_sequence(s); }
  *dptr = addr;
  return CUDA_SUCCESS;
}

CUresult alloc_async(CUdeviceptr* dptr, size_t bytes, CUstream h, bool per_thread)
{
  RMM_EMU_REQUIRE_INIT();
  if (dptr == nullptr || bytes == 0) { return CUDA_ERROR_INVALID_VALUE; }
  std::shared_ptr<Stream> s;
  if (auto r = resolve_stream(h, per_thread, s); r != CUDA_SUCCESS) { return r; }
  // The current pool of the stream's device.
  return alloc_async(dptr, bytes, *s, [&] { return s->context().device().current_pool; });
}

CUresult alloc_from_pool_async(CUdeviceptr* dptr, size_t bytes, CUmemoryPool handle, CUstream h, bool per_thread)
{
  RMM_EMU_REQUIRE_INIT();
  if (dptr == nullptr || bytes == 0) { return CUDA_ERROR_INVALID_VALUE; }
  std::shared_ptr<Stream> s;
  if (auto r = resolve_stream(h, per_thread, s); r != CUDA_SUCCESS) { return r; }
  return alloc_async(dptr, bytes, *s, [&] { return lookup_pool(handle); });
}

CUresult free_async(CUdeviceptr ptr, CUstream h, bool per_thread)
{
  RMM_EMU_REQUIRE_INIT();
  std::shared_ptr<Stream> s;
  if (auto r = resolve_stream(h, per_thread, s); r != CUDA_SUCCESS) { return r; }
  if (ptr == 0) { return CUDA_SUCCESS; }
  if (s->capture_status() == CU_STREAM_CAPTURE_STATUS_NONE && !unsafe_call_allowed(s->context())) {
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  std::lock_guard lock(memory_mutex());
  Allocation* a = find_allocation(ptr);
  if (a == nullptr || a->base != ptr) { return CUDA_ERROR_INVALID_VALUE; }
  // A graph frees only memory its own capture allocated (an H200 refuses the rest).
  if (auto const sequence = capture_sequence(*s); sequence != 0 && a->captured_in != sequence) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Allocation const copy = *a;
  switch (copy.kind) {
    case MemKind::pool: {
      erase_allocation(ptr);
      // The block is poisoned when the stream gets there; until then earlier work may use it.
      auto const pos = s->context().enqueue(*s, [base = copy.base, span = copy.span] { poison_freed(base, span); });
      copy.pool->free_deferred(copy.base, copy.size, StreamPos{s, pos});
      return CUDA_SUCCESS;
    }
    case MemKind::device: {
      // cudaMalloc memory freed in stream order: back to the device once the stream reaches it.
      erase_allocation(ptr);
      Device* dev = device(copy.device);
      s->context().enqueue(*s, [dev, copy] {
        std::lock_guard inner(memory_mutex());
        poison_freed(copy.base, copy.size);
        return_device_memory(*dev, copy.base, copy.span);
      });
      return CUDA_SUCCESS;
    }
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace

RMM_EMU_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytes, CUstream h)
{
  return alloc_async(dptr, bytes, h, false);
}
RMM_EMU_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytes, CUstream h)
{
  return alloc_async(dptr, bytes, h, true);
}
RMM_EMU_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream h)
{
  return alloc_from_pool_async(dptr, bytes, pool, h, false);
}
RMM_EMU_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream h)
{
  return alloc_from_pool_async(dptr, bytes, pool, h, true);
}
RMM_EMU_EXPORT CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream h) { return free_async(ptr, h, false); }
RMM_EMU_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr ptr, CUstream h) { return free_async(ptr, h, true); }

RMM_EMU_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* pool, CUmemPoolProps const* props)
{
  RMM_EMU_REQUIRE_INIT();
  if (pool == nullptr || props == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    // Host-located pools exist on real CUDA; the emulator models device pools only.
    return props->location.type == CU_MEM_LOCATION_TYPE_INVALID ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
  }
  Device* dev = device(props->location.id);
  if (dev == nullptr) { return CUDA_ERROR_INVALID_VALUE; }  // the H200 answers a bad device this way
  if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED) {
    return props->allocType == CU_MEM_ALLOCATION_TYPE_INVALID ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
  }
  if ((static_cast<unsigned>(props->handleTypes) & ~kSupportedHandleTypes) != 0) { return CUDA_ERROR_NOT_SUPPORTED; }
  std::lock_guard lock(memory_mutex());
  auto* p = new Pool(*dev, *props, /*is_default=*/false);
  dev->pools.push_back(p);
  *pool = p->handle();
  return CUDA_SUCCESS;
}

// Live allocations keep working and can still be freed; the pool goes once they are all back.
RMM_EMU_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool handle)
{
  RMM_EMU_REQUIRE_INIT();
  std::lock_guard lock(memory_mutex());
  Pool* p = lookup_pool(handle);
  if (p == nullptr || p->is_default()) { return CUDA_ERROR_INVALID_VALUE; }
  retire_pool(p);
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool handle, CUmemPool_attribute attr, void* value)
{
  RMM_EMU_REQUIRE_INIT();
  if (value == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  Pool* p = lookup_pool(handle);
  if (p == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  return p->set_attribute(attr, value);
}

RMM_EMU_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool handle, CUmemPool_attribute attr, void* value)
{
  RMM_EMU_REQUIRE_INIT();
  if (value == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  Pool* p = lookup_pool(handle);
  if (p == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  return p->get_attribute(attr, value);
}

RMM_EMU_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool handle, size_t minBytesToKeep)
{
  RMM_EMU_REQUIRE_INIT();
  std::lock_guard lock(memory_mutex());
  Pool* p = lookup_pool(handle);
  if (p == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  p->release(minBytesToKeep);
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool handle, CUmemAccessDesc const* map, size_t count)
{
  RMM_EMU_REQUIRE_INIT();
  if (map == nullptr && count != 0) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  Pool* p = lookup_pool(handle);
  if (p == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  for (size_t i = 0; i < count; ++i) {
    auto const& d = map[i];
    if (d.location.type != CU_MEM_LOCATION_TYPE_DEVICE) { return CUDA_ERROR_INVALID_VALUE; }
    if (device(d.location.id) == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
    if (d.flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && d.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // The owning device always has read-write access.
    if (d.location.id == p->device().ordinal() && d.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  for (size_t i = 0; i < count; ++i) { p->access[map[i].location.id] = map[i].flags; }
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool handle, CUmemLocation* location)
{
  RMM_EMU_REQUIRE_INIT();
  if (flags == nullptr || location == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (location->type != CU_MEM_LOCATION_TYPE_DEVICE) { return CUDA_ERROR_INVALID_VALUE; }
  if (device(location->id) == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  std::lock_guard lock(memory_mutex());
  Pool* p = lookup_pool(handle);
  if (p == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (location->id == p->device().ordinal()) {
    *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  } else {
    auto it = p->access.find(location->id);
    *flags  = it == p->access.end() ? CU_MEM_ACCESS_FLAGS_PROT_NONE : it->second;
  }
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemPoolExportToShareableHandle(void* handle_out,
                                                         CUmemoryPool handle,
                                                         CUmemAllocationHandleType type,
                                                         unsigned long long flags)
{
  RMM_EMU_REQUIRE_INIT();
  if (handle_out == nullptr || flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  {
    std::lock_guard lock(memory_mutex());
    Pool* p = lookup_pool(handle);
    if (p == nullptr || (static_cast<unsigned>(p->props().handleTypes) & static_cast<unsigned>(type)) == 0) {
      return CUDA_ERROR_INVALID_VALUE;  // the pool was not created for this handle type
    }
  }
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    std::fprintf(stderr,
                 "rmm CUDA emulator: cuMemPoolExportToShareableHandle is not emulated (memory pools cannot be "
                 "shared between processes here); returning CUDA_ERROR_NOT_SUPPORTED\n");
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

RMM_EMU_EXPORT CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool*,
                                                           void*,
                                                           CUmemAllocationHandleType,
                                                           unsigned long long)
{
  RMM_EMU_REQUIRE_INIT();
  return CUDA_ERROR_NOT_SUPPORTED;
}

RMM_EMU_EXPORT CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData*, CUdeviceptr)
{
  RMM_EMU_REQUIRE_INIT();
  return CUDA_ERROR_NOT_SUPPORTED;
}

RMM_EMU_EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr*, CUmemoryPool, CUmemPoolPtrExportData*)
{
  RMM_EMU_REQUIRE_INIT();
  return CUDA_ERROR_NOT_SUPPORTED;
}

// Graphs are captured but never instantiated here (cuGraphInstantiate is not emulated), so no
// graph allocation ever holds memory: the driver's answers for a process without graphs.
RMM_EMU_EXPORT CUresult cuDeviceGetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void* value)
{
  RMM_EMU_REQUIRE_INIT();
  if (value == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (device(dev) == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  switch (attr) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: *static_cast<cuuint64_t*>(value) = 0; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

RMM_EMU_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  return device(dev) == nullptr ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  if (pool == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  std::lock_guard lock(memory_mutex());
  *pool = d->default_pool->handle();
  return CUDA_SUCCESS;
}

namespace {

// The pool cuMemGetDefaultMemPool / cuMemGetMemPool name for a device location and allocation type
// (CUDA 13): device-located pinned and managed pools are emulated, host-located ones are not.
CUresult location_pool(CUmemoryPool* pool, CUmemLocation const* location, CUmemAllocationType type, bool current)
{
  RMM_EMU_REQUIRE_INIT();
  if (pool == nullptr || location == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (location->type != CU_MEM_LOCATION_TYPE_DEVICE) {
    return location->type == CU_MEM_LOCATION_TYPE_INVALID ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
  }
  Device* d = device(location->id);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  std::lock_guard lock(memory_mutex());
  switch (type) {
    case CU_MEM_ALLOCATION_TYPE_PINNED: *pool = (current ? d->current_pool : d->default_pool)->handle(); break;
    case CU_MEM_ALLOCATION_TYPE_MANAGED: *pool = d->default_managed_pool->handle(); break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

}  // namespace

RMM_EMU_EXPORT CUresult cuMemGetDefaultMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type)
{
  return location_pool(pool, location, type, /*current=*/false);
}

RMM_EMU_EXPORT CUresult cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type)
{
  return location_pool(pool, location, type, /*current=*/true);
}

RMM_EMU_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev)
{
  RMM_EMU_REQUIRE_INIT();
  if (pool == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  std::lock_guard lock(memory_mutex());
  *pool = d->current_pool->handle();
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool handle)
{
  RMM_EMU_REQUIRE_INIT();
  Device* d = device(dev);
  if (d == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  std::lock_guard lock(memory_mutex());
  Pool* p = lookup_pool(handle);
  if (p == nullptr || &p->device() != d) { return CUDA_ERROR_INVALID_VALUE; }
  d->current_pool = p;
  return CUDA_SUCCESS;
}
