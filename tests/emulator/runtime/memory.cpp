// SPDX-License-Identifier: Apache-2.0
// Runtime API: synchronous allocation, memory information, pointer attributes, prefetch and advice.
#include "rt.hpp"

using namespace rmm_emu::rt;

namespace {

Driver const& D() { return driver(); }

CUdeviceptr dptr(void const* p) { return reinterpret_cast<CUdeviceptr>(p); }

CUmemLocation location(cudaMemLocation loc)
{
  // cudaMemLocationType mirrors CUmemLocationType value for value.
  CUmemLocation out{};
  out.type = static_cast<CUmemLocationType>(loc.type);
  out.id   = loc.id;
  return out;
}

cudaError_t prefetch(void const* p, size_t count, cudaMemLocation loc, unsigned flags, cudaStream_t s, bool pt)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().memPrefetchAsync(pt)(dptr(p), count, location(loc), flags, s));
}

/// Whether the current device reaches pageable host memory (cudaDevAttrPageableMemoryAccess).
bool pageable_memory_reachable()
{
  int device = 0;
  int value  = 0;
  return current_device(device) == cudaSuccess &&
         D().deviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, device) == CUDA_SUCCESS &&
         value != 0;
}

}  // namespace

// Zero-byte requests succeed with a null pointer (the driver would refuse them), as on the H200.
RMM_RT_EXPORT cudaError_t cudaMalloc(void** devPtr, size_t size)
{
  RMM_RT_ENTER_CONTEXT();
  if (devPtr == nullptr) { return record(cudaErrorInvalidValue); }
  if (size == 0) {
    *devPtr = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr p = 0;
  auto const e  = result(D().memAlloc(&p, size));
  if (e == cudaSuccess) { *devPtr = reinterpret_cast<void*>(p); }
  return e;
}

// cudaFree(nullptr) is the classic "initialise the context" call: it binds the context, frees nothing.
RMM_RT_EXPORT cudaError_t cudaFree(void* devPtr)
{
  RMM_RT_ENTER_CONTEXT();
  if (devPtr == nullptr) { return cudaSuccess; }
  return result(D().memFree(dptr(devPtr)));
}

RMM_RT_EXPORT cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags)
{
  RMM_RT_ENTER_CONTEXT();
  if (devPtr == nullptr) { return record(cudaErrorInvalidValue); }
  if (size == 0) {
    *devPtr = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr p = 0;
  auto const e  = result(D().memAllocManaged(&p, size, flags));
  if (e == cudaSuccess) { *devPtr = reinterpret_cast<void*>(p); }
  return e;
}

RMM_RT_EXPORT cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags)
{
  RMM_RT_ENTER_CONTEXT();
  if (pHost == nullptr) { return record(cudaErrorInvalidValue); }
  if (size == 0) {
    *pHost = nullptr;
    return cudaSuccess;
  }
  // cudaHostAlloc* flags carry the same bits as CU_MEMHOSTALLOC_*.
  return result(D().memHostAlloc(pHost, size, flags));
}

RMM_RT_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t size)
{
  return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

RMM_RT_EXPORT cudaError_t cudaFreeHost(void* ptr)
{
  RMM_RT_ENTER_CONTEXT();
  if (ptr == nullptr) { return cudaSuccess; }
  return result(D().memFreeHost(ptr));
}

RMM_RT_EXPORT cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags)
{
  RMM_RT_ENTER_CONTEXT();
  if (pDevice == nullptr) { return record(cudaErrorInvalidValue); }
  CUdeviceptr p = 0;
  auto const e  = result(D().memHostGetDevicePointer(&p, pHost, flags));
  if (e == cudaSuccess) { *pDevice = reinterpret_cast<void*>(p); }
  return e;
}

RMM_RT_EXPORT cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().memHostGetFlags(pFlags, pHost));
}

RMM_RT_EXPORT cudaError_t cudaMemGetInfo(size_t* free, size_t* total)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().memGetInfo(free, total));
}

RMM_RT_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, void const* ptr)
{
  RMM_RT_ENTER();
  if (attributes == nullptr) { return record(cudaErrorInvalidValue); }
  CUmemorytype type{};
  int ordinal                 = CU_DEVICE_INVALID;
  void* device_ptr            = nullptr;
  void* host_ptr              = nullptr;
  int managed                 = 0;
  CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED};
  void* data[]                = {&type, &ordinal, &device_ptr, &host_ptr, &managed};
  if (auto r = D().pointerGetAttributes(5, which, data, dptr(ptr)); r != CUDA_SUCCESS) { return result(r); }
  if (managed != 0) {
    attributes->type = cudaMemoryTypeManaged;
  } else if (type == CU_MEMORYTYPE_DEVICE) {
    attributes->type = cudaMemoryTypeDevice;
  } else if (type == CU_MEMORYTYPE_HOST) {
    attributes->type = cudaMemoryTypeHost;
  } else {
    // Memory CUDA does not know: the H200 reports device -2 and the pointer as a host pointer.
    // Where the device reaches pageable memory, the same address is its device pointer too.
    attributes->type = cudaMemoryTypeUnregistered;
    ordinal          = CU_DEVICE_INVALID;
    device_ptr       = pageable_memory_reachable() ? const_cast<void*>(ptr) : nullptr;
    host_ptr         = const_cast<void*>(ptr);
  }
  attributes->device        = ordinal;
  attributes->devicePointer = device_ptr;
  attributes->hostPointer   = host_ptr;
  return cudaSuccess;
}

RMM_RT_EXPORT cudaError_t cudaMemPrefetchAsync(void const* devPtr,
                                               size_t count,
                                               cudaMemLocation location,
                                               unsigned int flags,
                                               cudaStream_t stream)
{
  return prefetch(devPtr, count, location, flags, stream, false);
}

RMM_RT_EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(void const* devPtr,
                                                    size_t count,
                                                    cudaMemLocation location,
                                                    unsigned int flags,
                                                    cudaStream_t stream)
{
  return prefetch(devPtr, count, location, flags, stream, true);
}

RMM_RT_EXPORT cudaError_t cudaMemAdvise(void const* devPtr, size_t count, cudaMemoryAdvise advice, cudaMemLocation loc)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().memAdvise(dptr(devPtr), count, static_cast<CUmem_advise>(advice), location(loc)));
}

RMM_RT_EXPORT cudaError_t
cudaMemRangeGetAttribute(void* data, size_t dataSize, cudaMemRangeAttribute attribute, void const* devPtr, size_t count)
{
  RMM_RT_ENTER_CONTEXT();
  return result(
    D().memRangeGetAttribute(data, dataSize, static_cast<CUmem_range_attribute>(attribute), dptr(devPtr), count));
}

RMM_RT_EXPORT cudaError_t cudaMemRangeGetAttributes(void** data,
                                                    size_t* dataSizes,
                                                    cudaMemRangeAttribute* attributes,
                                                    size_t numAttributes,
                                                    void const* devPtr,
                                                    size_t count)
{
  RMM_RT_ENTER_CONTEXT();
  if (data == nullptr || dataSizes == nullptr || attributes == nullptr || numAttributes == 0) {
    return record(cudaErrorInvalidValue);
  }
  for (std::size_t i = 0; i < numAttributes; ++i) {
    auto const r = D().memRangeGetAttribute(data[i], dataSizes[i], static_cast<CUmem_range_attribute>(attributes[i]),
                                            dptr(devPtr), count);
    if (r != CUDA_SUCCESS) { return result(r); }
  }
  return cudaSuccess;
}
