// SPDX-License-Identifier: Apache-2.0
// Entry points: synchronous allocation, memory information, pointer attributes, prefetch/advise.
#include "common.hpp"
#include "capture.hpp"
#include "config.hpp"
#include "context.hpp"
#include "device.hpp"
#include "memory.hpp"
#include "prefetch_locations.hpp"
#include "mempool.hpp"
#include "state.hpp"
#include "stream.hpp"
#include "vmm.hpp"

#include <mutex>

using namespace rmm_emu;

namespace {

CUresult pointer_attribute(void* data, CUpointer_attribute attr, Allocation const* a, std::uint64_t ptr, bool strict)
{
  auto const put = [data](auto v) { *static_cast<decltype(v)*>(data) = v; };
  if (a == nullptr) {
    if (strict) { return CUDA_ERROR_INVALID_VALUE; }
    // cuPointerGetAttributes on a pointer CUDA does not know: defaults, and success.
    switch (attr) {
      case CU_POINTER_ATTRIBUTE_CONTEXT: put(CUcontext{nullptr}); break;
      case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: put(static_cast<CUmemorytype>(0)); break;
      case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: put(static_cast<void*>(nullptr)); break;
      case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: put(int{CU_DEVICE_INVALID}); break;
      case CU_POINTER_ATTRIBUTE_BUFFER_ID:
      case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: put(static_cast<unsigned long long>(0)); break;
      case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: put(std::size_t{0}); break;
      case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: put(CUmemoryPool{nullptr}); break;
      case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: put(false); break;
      default: put(0); break;
    }
    return CUDA_SUCCESS;
  }
  bool const device_memory = device_only(*a);
  auto* p                  = reinterpret_cast<void*>(ptr);
  switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: put(device(a->device)->primary().handle()); break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      put(a->kind == MemKind::pinned ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE);  // managed reads "device"
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: put(p); break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (device_memory) {
        if (strict) { return CUDA_ERROR_INVALID_VALUE; }
        put(static_cast<void*>(nullptr));
      } else {
        put(p);
      }
      break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: put(0); break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: put(static_cast<unsigned long long>(a->buffer_id)); break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      put(a->kind == MemKind::managed || (a->kind == MemKind::pool && !device_memory) ? 1 : 0);
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: put(a->device); break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: put(a->kind == MemKind::device ? 1 : 0); break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: put(reinterpret_cast<void*>(a->base)); break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: put(static_cast<std::size_t>(a->size)); break;
    case CU_POINTER_ATTRIBUTE_MAPPED: put(1); break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      if (a->kind == MemKind::pool) {
        put(static_cast<unsigned long long>(a->pool->props().handleTypes));
      } else {
        put(static_cast<unsigned long long>(a->kind == MemKind::vmm ? a->flags : 0));  // VMM: cuMemCreate's types
      }
      break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: put(device_memory ? 1 : 0); break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      put(a->kind == MemKind::vmm ? vmm_pointer_access_flags(a->base)
                                  : int{CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE});
      break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      put(a->kind == MemKind::pool ? a->pool->handle() : CUmemoryPool{nullptr});
      break;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      // As cuMemBatchDecompressAsync's documentation lists: cuMemAlloc memory, cuMemCreate with the
      // decompress usage, and blocks of a pool created with it. A boolean: one byte, which callers
      // (RMM's tests, cuda-bindings) read into a bool.
      switch (a->kind) {
        case MemKind::device: put(true); break;
        case MemKind::pool: put((a->pool->props().usage & CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS) != 0); break;
        case MemKind::vmm: put(vmm_pointer_hw_decompress(a->base)); break;
        default: put(false); break;
      }
      break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// Prefetch and advice apply to managed memory (and, with pageable memory access, to host memory).
CUresult check_managed_range(CUdeviceptr ptr, std::size_t count)
{
  if (ptr == 0 || count == 0) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  Allocation const* a = find_allocation(ptr);
  if (a != nullptr) {
    bool const managed = a->kind == MemKind::managed || (a->kind == MemKind::pool && !device_only(*a));
    if (!managed && settings().pageable_memory_access.load() == 0) { return CUDA_ERROR_INVALID_VALUE; }
    if (device_only(*a)) { return CUDA_ERROR_INVALID_VALUE; }
    return ptr + count <= a->base + a->size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
  if (device_space_owner(ptr) != nullptr || vmm_reserved(ptr)) { return CUDA_ERROR_INVALID_VALUE; }
  return settings().pageable_memory_access.load() != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult check_location(CUmemLocation const& loc)
{
  switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: return device(loc.id) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult prefetch(CUdeviceptr ptr, std::size_t count, CUmemLocation loc, unsigned flags, CUstream h, bool per_thread)
{
  RMM_EMU_REQUIRE_INIT();
  if (flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  if (auto r = check_location(loc); r != CUDA_SUCCESS) { return r; }
  if (auto r = check_managed_range(ptr, count); r != CUDA_SUCCESS) { return r; }
  std::shared_ptr<Stream> s;
  if (auto r = resolve_stream(h, per_thread, s); r != CUDA_SUCCESS) { return r; }
  {
    std::lock_guard lock(memory_mutex());
    note_prefetch(ptr, count, loc);
  }
  s->context().enqueue(*s, {});  // migration is a no-op here, but it is ordered like one
  return CUDA_SUCCESS;
}

CUmemLocation location_of_device(CUdevice dev)
{
  CUmemLocation loc{};
  if (dev == CU_DEVICE_CPU) {
    loc.type = CU_MEM_LOCATION_TYPE_HOST;
  } else {
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id   = dev;
  }
  return loc;
}

}  // namespace

RMM_EMU_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  if (dptr == nullptr || bytesize == 0) { return CUDA_ERROR_INVALID_VALUE; }
  if (!unsafe_call_allowed(*ctx)) { return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; }
  return allocate_device(ctx->device(), bytesize, dptr);
}

RMM_EMU_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
  RMM_EMU_REQUIRE_INIT();
  if (auto* ctx = current_context(); ctx != nullptr && !unsafe_call_allowed(*ctx)) {
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return free_sync(dptr, /*host_api=*/false);
}

RMM_EMU_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  if (dptr == nullptr || bytesize == 0) { return CUDA_ERROR_INVALID_VALUE; }
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) { return CUDA_ERROR_INVALID_VALUE; }
  return allocate_managed(ctx->device(), bytesize, flags, dptr);
}

RMM_EMU_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int flags)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  if (pp == nullptr || bytesize == 0) { return CUDA_ERROR_INVALID_VALUE; }
  if ((flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return allocate_pinned(ctx->device(), bytesize, flags, pp);
}

RMM_EMU_EXPORT CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) { return cuMemHostAlloc(pp, bytesize, 0); }

RMM_EMU_EXPORT CUresult cuMemFreeHost(void* p)
{
  RMM_EMU_REQUIRE_INIT();
  return free_sync(reinterpret_cast<std::uint64_t>(p), /*host_api=*/true);
}

RMM_EMU_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int flags)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  (void)ctx;
  if (pdptr == nullptr || flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  auto const addr = reinterpret_cast<std::uint64_t>(p);
  std::lock_guard lock(memory_mutex());
  Allocation const* a = find_allocation(addr);
  if (a == nullptr || a->kind != MemKind::pinned) { return CUDA_ERROR_INVALID_VALUE; }
  *pdptr = addr;  // unified addressing: the device sees pinned memory at its host address
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemHostGetFlags(unsigned int* pFlags, void* p)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  (void)ctx;
  if (pFlags == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  Allocation const* a = find_allocation(reinterpret_cast<std::uint64_t>(p));
  if (a == nullptr || a->kind != MemKind::pinned) { return CUDA_ERROR_INVALID_VALUE; }
  *pFlags = a->flags;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemGetInfo_v2(size_t* free, size_t* total)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  if (free == nullptr || total == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  Device& dev = ctx->device();
  std::lock_guard lock(memory_mutex());
  *total = dev.capacity();
  *free  = dev.capacity() - dev.used;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr)
{
  RMM_EMU_REQUIRE_INIT();
  std::lock_guard lock(memory_mutex());
  Allocation const* a = find_allocation(dptr);
  if (a == nullptr || a->kind == MemKind::pinned) { return CUDA_ERROR_NOT_FOUND; }
  if (pbase != nullptr) { *pbase = a->base; }
  if (psize != nullptr) { *psize = a->size; }
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
  RMM_EMU_REQUIRE_INIT();
  if (data == nullptr || ptr == 0) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  return pointer_attribute(data, attribute, find_allocation(ptr), ptr, /*strict=*/true);
}

RMM_EMU_EXPORT CUresult cuPointerGetAttributes(unsigned int numAttributes,
                                               CUpointer_attribute* attributes,
                                               void** data,
                                               CUdeviceptr ptr)
{
  RMM_EMU_REQUIRE_INIT();
  if (numAttributes == 0 || attributes == nullptr || data == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  Allocation const* a = ptr == 0 ? nullptr : find_allocation(ptr);
  for (unsigned i = 0; i < numAttributes; ++i) {
    if (data[i] == nullptr) { continue; }
    if (auto r = pointer_attribute(data[i], attributes[i], a, ptr, /*strict=*/false); r != CUDA_SUCCESS) { return r; }
  }
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult
cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream)
{
  return prefetch(devPtr, count, location, flags, hStream, false);
}

RMM_EMU_EXPORT CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr,
                                                   size_t count,
                                                   CUmemLocation location,
                                                   unsigned int flags,
                                                   CUstream hStream)
{
  return prefetch(devPtr, count, location, flags, hStream, true);
}

RMM_EMU_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
  return prefetch(devPtr, count, location_of_device(dstDevice), 0, hStream, false);
}

RMM_EMU_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
  return prefetch(devPtr, count, location_of_device(dstDevice), 0, hStream, true);
}

RMM_EMU_EXPORT CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location)
{
  RMM_EMU_REQUIRE_INIT();
  if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  bool const needs_location = advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION ||
                              advice == CU_MEM_ADVISE_SET_ACCESSED_BY || advice == CU_MEM_ADVISE_UNSET_ACCESSED_BY;
  if (needs_location) {
    if (auto r = check_location(location); r != CUDA_SUCCESS) { return r; }
  }
  return check_managed_range(devPtr, count);  // valid advice is accepted and has no effect here
}

RMM_EMU_EXPORT CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{
  return cuMemAdvise_v2(devPtr, count, advice, location_of_device(device));
}

// Only where the range was last prefetched: advice has no effect here, so the attributes that
// report it are not emulated.
RMM_EMU_EXPORT CUresult
cuMemRangeGetAttribute(void* data, size_t dataSize, CUmem_range_attribute attribute, CUdeviceptr devPtr, size_t count)
{
  RMM_EMU_REQUIRE_INIT();
  if (data == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (auto r = check_managed_range(devPtr, count); r != CUDA_SUCCESS) { return r; }
  std::lock_guard lock(memory_mutex());
  auto const last = last_prefetch_location(devPtr, count);
  bool const host = last.type == CU_MEM_LOCATION_TYPE_HOST || last.type == CU_MEM_LOCATION_TYPE_HOST_NUMA;
  int value       = 0;
  switch (attribute) {
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
      value = last.type == CU_MEM_LOCATION_TYPE_DEVICE ? last.id : host ? CU_DEVICE_CPU : CU_DEVICE_INVALID;
      break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE: value = static_cast<int>(last.type); break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
      value = last.type == CU_MEM_LOCATION_TYPE_DEVICE || last.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ? last.id : 0;
      break;
    default: return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (dataSize != sizeof(int)) { return CUDA_ERROR_INVALID_VALUE; }
  *static_cast<int*>(data) = value;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemRangeGetAttributes(void** data,
                                                size_t* dataSizes,
                                                CUmem_range_attribute* attributes,
                                                size_t numAttributes,
                                                CUdeviceptr devPtr,
                                                size_t count)
{
  RMM_EMU_REQUIRE_INIT();
  if (data == nullptr || dataSizes == nullptr || attributes == nullptr || numAttributes == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (std::size_t i = 0; i < numAttributes; ++i) {
    if (auto r = cuMemRangeGetAttribute(data[i], dataSizes[i], attributes[i], devPtr, count); r != CUDA_SUCCESS) {
      return r;
    }
  }
  return CUDA_SUCCESS;
}
