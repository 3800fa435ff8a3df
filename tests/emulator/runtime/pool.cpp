// SPDX-License-Identifier: Apache-2.0
// Runtime API: stream-ordered allocation and memory pools.
#include "rt.hpp"

#include <cstddef>

using namespace rmm_emu::rt;

// The runtime structures are the driver's under another name; the driver reads them directly.
static_assert(sizeof(cudaMemPoolProps) == sizeof(CUmemPoolProps));
static_assert(offsetof(cudaMemPoolProps, location) == offsetof(CUmemPoolProps, location));
static_assert(offsetof(cudaMemPoolProps, maxSize) == offsetof(CUmemPoolProps, maxSize));
static_assert(sizeof(cudaMemAccessDesc) == sizeof(CUmemAccessDesc));
static_assert(sizeof(cudaMemLocation) == sizeof(CUmemLocation));

namespace {

Driver const& D() { return driver(); }

cudaError_t malloc_async(void** p, size_t size, cudaStream_t s, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  if (p == nullptr) { return record(cudaErrorInvalidValue); }
  if (size == 0) {
    *p = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr d = 0;
  auto const e  = result(D().memAllocAsync(pt)(&d, size, s));
  if (e == cudaSuccess) { *p = reinterpret_cast<void*>(d); }
  return e;
}

cudaError_t malloc_from_pool_async(void** p, size_t size, cudaMemPool_t pool, cudaStream_t s, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  if (p == nullptr) { return record(cudaErrorInvalidValue); }
  if (size == 0) {
    *p = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr d = 0;
  auto const e  = result(D().memAllocFromPoolAsync(pt)(&d, size, pool, s));
  if (e == cudaSuccess) { *p = reinterpret_cast<void*>(d); }
  return e;
}

cudaError_t free_async(void* p, cudaStream_t s, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().memFreeAsync(pt)(reinterpret_cast<CUdeviceptr>(p), s));
}

}  // namespace

RMM_RT_EXPORT cudaError_t cudaMallocAsync(void** p, size_t size, cudaStream_t s)
{
  return malloc_async(p, size, s, false);
}
RMM_RT_EXPORT cudaError_t cudaMallocAsync_ptsz(void** p, size_t size, cudaStream_t s)
{
  return malloc_async(p, size, s, true);
}
RMM_RT_EXPORT cudaError_t cudaMallocFromPoolAsync(void** p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
  return malloc_from_pool_async(p, size, pool, s, false);
}
RMM_RT_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void** p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
  return malloc_from_pool_async(p, size, pool, s, true);
}
RMM_RT_EXPORT cudaError_t cudaFreeAsync(void* p, cudaStream_t s) { return free_async(p, s, false); }
RMM_RT_EXPORT cudaError_t cudaFreeAsync_ptsz(void* p, cudaStream_t s) { return free_async(p, s, true); }

RMM_RT_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, cudaMemPoolProps const* props)
{
  RMM_RT_ENTER();
  return result(D().memPoolCreate(pool, reinterpret_cast<CUmemPoolProps const*>(props)));
}

RMM_RT_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
  RMM_RT_ENTER();
  return result(D().memPoolDestroy(pool));
}

RMM_RT_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value)
{
  RMM_RT_ENTER();
  return result(D().memPoolSetAttribute(pool, static_cast<CUmemPool_attribute>(attr), value));
}

RMM_RT_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value)
{
  RMM_RT_ENTER();
  return result(D().memPoolGetAttribute(pool, static_cast<CUmemPool_attribute>(attr), value));
}

RMM_RT_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t minBytesToKeep)
{
  RMM_RT_ENTER();
  return result(D().memPoolTrimTo(pool, minBytesToKeep));
}

RMM_RT_EXPORT cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, cudaMemAccessDesc const* descList, size_t count)
{
  RMM_RT_ENTER();
  return result(D().memPoolSetAccess(pool, reinterpret_cast<CUmemAccessDesc const*>(descList), count));
}

RMM_RT_EXPORT cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool, cudaMemLocation* location)
{
  RMM_RT_ENTER();
  return result(D().memPoolGetAccess(reinterpret_cast<CUmemAccess_flags*>(flags), pool,
                                     reinterpret_cast<CUmemLocation*>(location)));
}

RMM_RT_EXPORT cudaError_t cudaMemPoolExportToShareableHandle(void* shareableHandle,
                                                             cudaMemPool_t pool,
                                                             cudaMemAllocationHandleType handleType,
                                                             unsigned int flags)
{
  RMM_RT_ENTER();
  return result(D().memPoolExportToShareableHandle(shareableHandle, pool,
                                                   static_cast<CUmemAllocationHandleType>(handleType), flags));
}

RMM_RT_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device)
{
  RMM_RT_ENTER();
  return result(D().deviceGetDefaultMemPool(pool, device));
}

// cudaMemLocation and cudaMemAllocationType match the driver's structure and values.
RMM_RT_EXPORT cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t* pool,
                                                   cudaMemLocation* location,
                                                   cudaMemAllocationType type)
{
  RMM_RT_ENTER();
  return result(
    D().memGetDefaultMemPool(pool, reinterpret_cast<CUmemLocation*>(location), static_cast<CUmemAllocationType>(type)));
}

RMM_RT_EXPORT cudaError_t cudaMemGetMemPool(cudaMemPool_t* pool, cudaMemLocation* location, cudaMemAllocationType type)
{
  RMM_RT_ENTER();
  return result(
    D().memGetMemPool(pool, reinterpret_cast<CUmemLocation*>(location), static_cast<CUmemAllocationType>(type)));
}

RMM_RT_EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device)
{
  RMM_RT_ENTER();
  return result(D().deviceGetMemPool(pool, device));
}

RMM_RT_EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool)
{
  RMM_RT_ENTER();
  return result(D().deviceSetMemPool(device, pool));
}
