// SPDX-License-Identifier: Apache-2.0
// Runtime API: devices, versions, device-wide synchronization and reset, peer access.
#include "rt.hpp"

#include <cstring>

using namespace rmm_emu::rt;

namespace {

Driver const& D() { return driver(); }

int attribute(CUdevice_attribute a, int dev)
{
  int v = 0;
  D().deviceGetAttribute(&v, a, dev);
  return v;
}

// The primary context of `dev` without changing the calling thread's binding.
cudaError_t primary_context(int dev, CUcontext& ctx)
{
  if (auto r = D().primaryCtxRetain(&ctx, dev); r != CUDA_SUCCESS) { return to_runtime(r); }
  D().primaryCtxRelease(dev);
  return cudaSuccess;
}

}  // namespace

RMM_RT_EXPORT cudaError_t cudaGetDeviceCount(int* count)
{
  if (count == nullptr) { return record(cudaErrorInvalidValue); }
  *count = 0;
  RMM_RT_ENTER();
  return result(D().deviceGetCount(count));
}

RMM_RT_EXPORT cudaError_t cudaGetDevice(int* device)
{
  RMM_RT_ENTER();
  if (device == nullptr) { return record(cudaErrorInvalidValue); }
  return record(current_device(*device));
}

RMM_RT_EXPORT cudaError_t cudaSetDevice(int device)
{
  RMM_RT_ENTER();
  return record(activate_device(device));
}

RMM_RT_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device)
{
  RMM_RT_ENTER();
  // cudaDeviceAttr and CUdevice_attribute share their numbering.
  return result(D().deviceGetAttribute(value, static_cast<CUdevice_attribute>(attr), device));
}

RMM_RT_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device)
{
  RMM_RT_ENTER();
  if (prop == nullptr) { return record(cudaErrorInvalidValue); }
  CUdevice dev = 0;
  if (auto r = D().deviceGet(&dev, device); r != CUDA_SUCCESS) { return result(r); }
  std::memset(prop, 0, sizeof(*prop));
  D().deviceGetName(prop->name, sizeof(prop->name), dev);
  CUuuid uuid{};
  D().deviceGetUuid(&uuid, dev);
  std::memcpy(&prop->uuid, &uuid, sizeof(uuid));
  std::size_t total = 0;
  D().deviceTotalMem(&total, dev);
  prop->totalGlobalMem      = total;
  prop->sharedMemPerBlock   = static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev));
  prop->regsPerBlock        = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, dev);
  prop->warpSize            = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
  prop->memPitch            = static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_PITCH, dev));
  prop->maxThreadsPerBlock  = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
  prop->maxThreadsDim[0]    = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, dev);
  prop->maxThreadsDim[1]    = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, dev);
  prop->maxThreadsDim[2]    = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, dev);
  prop->maxGridSize[0]      = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, dev);
  prop->maxGridSize[1]      = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, dev);
  prop->maxGridSize[2]      = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, dev);
  prop->totalConstMem       = static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, dev));
  prop->major               = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  prop->minor               = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  prop->textureAlignment    = static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, dev));
  prop->multiProcessorCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  prop->integrated          = attribute(CU_DEVICE_ATTRIBUTE_INTEGRATED, dev);
  prop->canMapHostMemory    = attribute(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, dev);
  prop->surfaceAlignment    = static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT, dev));
  prop->concurrentKernels   = attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, dev);
  prop->ECCEnabled          = attribute(CU_DEVICE_ATTRIBUTE_ECC_ENABLED, dev);
  prop->pciBusID            = attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
  prop->pciDeviceID         = attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev);
  prop->pciDomainID         = attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev);
  prop->asyncEngineCount    = attribute(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, dev);
  prop->unifiedAddressing   = attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, dev);
  prop->memoryBusWidth      = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev);
  prop->l2CacheSize         = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  prop->persistingL2CacheMaxSize    = attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, dev);
  prop->maxThreadsPerMultiProcessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev);
  prop->streamPrioritiesSupported   = attribute(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, dev);
  prop->globalL1CacheSupported      = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, dev);
  prop->localL1CacheSupported       = attribute(CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, dev);
  prop->sharedMemPerMultiprocessor =
    static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, dev));
  prop->regsPerMultiprocessor             = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, dev);
  prop->managedMemory                     = attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev);
  prop->isMultiGpuBoard                   = attribute(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, dev);
  prop->multiGpuBoardGroupID              = attribute(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID, dev);
  prop->hostNativeAtomicSupported         = attribute(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, dev);
  prop->pageableMemoryAccess              = attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev);
  prop->concurrentManagedAccess           = attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev);
  prop->computePreemptionSupported        = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, dev);
  prop->canUseHostPointerForRegisteredMem = attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, dev);
  prop->cooperativeLaunch                 = attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev);
  prop->sharedMemPerBlockOptin =
    static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
  prop->pageableMemoryAccessUsesHostPageTables =
    attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, dev);
  prop->directManagedMemAccessFromHost = attribute(CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST, dev);
  prop->maxBlocksPerMultiProcessor     = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, dev);
  prop->accessPolicyMaxWindowSize      = attribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, dev);
  prop->reservedSharedMemPerBlock =
    static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, dev));
  prop->hostRegisterSupported             = attribute(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, dev);
  prop->sparseCudaArraySupported          = attribute(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, dev);
  prop->hostRegisterReadOnlySupported     = attribute(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, dev);
  prop->timelineSemaphoreInteropSupported = attribute(CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED, dev);
  prop->memoryPoolsSupported              = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev);
  prop->gpuDirectRDMASupported            = attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, dev);
  prop->gpuDirectRDMAFlushWritesOptions =
    static_cast<unsigned>(attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, dev));
  prop->gpuDirectRDMAWritesOrdering = attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, dev);
  prop->memoryPoolSupportedHandleTypes =
    static_cast<unsigned>(attribute(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, dev));
  prop->deferredMappingCudaArraySupported = attribute(CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED, dev);
  prop->ipcEventSupported                 = attribute(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, dev);
  prop->clusterLaunch                     = attribute(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, dev);
  prop->deviceNumaConfig                  = attribute(CU_DEVICE_ATTRIBUTE_NUMA_CONFIG, dev);
  prop->deviceNumaId                      = attribute(CU_DEVICE_ATTRIBUTE_NUMA_ID, dev);
  prop->hostNumaId                        = attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev);
  return cudaSuccess;
}

RMM_RT_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().ctxSynchronize());
}

RMM_RT_EXPORT cudaError_t cudaDeviceReset(void)
{
  RMM_RT_ENTER_CONTEXT();
  int dev = 0;
  current_device(dev);
  if (auto r = D().primaryCtxReset(dev); r != CUDA_SUCCESS) { return result(r); }
  // The next call retains and binds the (fresh) primary context again, as after a real reset.
  forget_device(dev);
  D().ctxSetCurrent(nullptr);
  return cudaSuccess;
}

RMM_RT_EXPORT cudaError_t cudaDriverGetVersion(int* version)
{
  if (unloading()) { return cudaErrorCudartUnloading; }
  if (version == nullptr) { return record(cudaErrorInvalidValue); }
  if (load_driver() != cudaSuccess) {
    *version = 0;  // no driver: version 0, as documented
    return cudaSuccess;
  }
  return result(D().driverGetVersion(version));
}

RMM_RT_EXPORT cudaError_t cudaRuntimeGetVersion(int* version)
{
  if (unloading()) { return cudaErrorCudartUnloading; }
  if (version == nullptr) { return record(cudaErrorInvalidValue); }
  *version = CUDART_VERSION;
  return cudaSuccess;
}

RMM_RT_EXPORT cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer)
{
  RMM_RT_ENTER();
  return result(D().deviceCanAccessPeer(can, device, peer));
}

RMM_RT_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
  RMM_RT_ENTER_CONTEXT();
  if (flags != 0) { return record(cudaErrorInvalidValue); }
  CUcontext ctx = nullptr;
  if (auto e = primary_context(peer, ctx); e != cudaSuccess) { return record(e); }
  return result(D().ctxEnablePeerAccess(ctx, 0));
}

RMM_RT_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
  RMM_RT_ENTER_CONTEXT();
  CUcontext ctx = nullptr;
  if (auto e = primary_context(peer, ctx); e != cudaSuccess) { return record(e); }
  return result(D().ctxDisablePeerAccess(ctx));
}

RMM_RT_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
  RMM_RT_ENTER();
  int dev = 0;
  current_device(dev);
  return result(D().primaryCtxSetFlags(dev, flags & ~static_cast<unsigned>(cudaDeviceMapHost)));
}

RMM_RT_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int* flags)
{
  RMM_RT_ENTER();
  if (flags == nullptr) { return record(cudaErrorInvalidValue); }
  int dev = 0;
  current_device(dev);
  unsigned f = 0;
  int active = 0;
  if (auto r = D().primaryCtxGetState(dev, &f, &active); r != CUDA_SUCCESS) { return result(r); }
  *flags = f | cudaDeviceMapHost;  // host memory is always mappable
  return cudaSuccess;
}

RMM_RT_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest)
{
  RMM_RT_ENTER_CONTEXT();
  return result(D().ctxGetStreamPriorityRange(least, greatest));
}
