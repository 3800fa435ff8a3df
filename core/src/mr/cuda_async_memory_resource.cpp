// SPDX-License-Identifier: Apache-2.0
#include "../detail/cuda_driver.hpp"
#include "detail/pool_allocation.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <limits>

namespace rmm::mr {

namespace {

CUdevice device_handle(cuda_device_id device)
{
  CUdevice handle{};
  RMM_CU_TRY(cuDeviceGet(&handle, device.value()));
  return handle;
}

void check_async_support(cuda_device_id device)
{
  int pools_supported{};
  RMM_CU_TRY(cuDeviceGetAttribute(&pools_supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, device_handle(device)));
  RMM_EXPECTS(pools_supported != 0,
              fmt::format("cuda_async_memory_resource: device {} does not support memory pools (cudaMallocAsync)",
                          device.value()));
}

void check_handle_support(cuda_device_id device, cuda_async_memory_resource::allocation_handle_type handle_type)
{
  if (handle_type == cuda_async_memory_resource::allocation_handle_type::none) { return; }
  int supported{};
  RMM_CU_TRY(
    cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, device_handle(device)));
  // A combination (POSIX file descriptors and fabric handles) needs every one of its types.
  RMM_EXPECTS((supported & static_cast<int>(handle_type)) == static_cast<int>(handle_type),
              fmt::format("cuda_async_memory_resource: device {} cannot export pool memory with handle type {:#x} "
                          "(supported handle types: {:#x})",
                          device.value(), static_cast<int>(handle_type), supported));
}

bool driver_knows_decompress_usage()
{
  int version{};
  RMM_CU_TRY(cuDriverGetVersion(&version));
  return version >= rmm::detail::min_hwdecompress_cuda_version;
}

}  // namespace

struct cuda_async_memory_resource::pool {
  cudaMemPool_t handle{};
  cuda_device_id device;

  pool(cuda_device_id dev, allocation_handle_type handle_type) : device{dev}
  {
    CUmemPoolProps props{};
    props.allocType     = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes   = static_cast<CUmemAllocationHandleType>(handle_type);
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id   = device.value();
    // Usable by the hardware decompression engine, as cudaMalloc memory is, where the driver
    // knows the usage (12.8 and later; it accepts it on devices without the engine).
    if (driver_knows_decompress_usage()) { props.usage = CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS; }
    RMM_CU_TRY(cuMemPoolCreate(&handle, &props));
  }
  ~pool() { RMM_CU_ASSERT_SUCCESS(cuMemPoolDestroy(handle)); }
  pool(pool const&)            = delete;
  pool& operator=(pool const&) = delete;
};

cuda_async_memory_resource::cuda_async_memory_resource(std::optional<std::size_t> initial_pool_size,
                                                       std::optional<std::size_t> release_threshold,
                                                       std::optional<allocation_handle_type> export_handle_type)
{
  auto const device      = get_current_cuda_device();
  auto const handle_type = export_handle_type.value_or(allocation_handle_type::none);
  check_async_support(device);
  check_handle_support(device, handle_type);

  pool_ = std::make_shared<pool>(device, handle_type);

  // By default the pool keeps everything it reserved: giving memory back at every synchronization
  // and asking for it again would make each allocation as slow as cudaMalloc.
  auto threshold =
    release_threshold ? static_cast<cuuint64_t>(*release_threshold) : std::numeric_limits<cuuint64_t>::max();
  RMM_CU_TRY(cuMemPoolSetAttribute(pool_->handle, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));

  if (initial_pool_size.value_or(0) > 0) {
    // Through allocate(), which refuses a size no allocation can have before CUDA sees it.
    auto const stream = cuda_stream_view{};
    void* ptr         = allocate(stream, *initial_pool_size);
    deallocate(stream, ptr, *initial_pool_size);
    RMM_CU_TRY(cuStreamSynchronize(stream.value()));
  }
}

cudaMemPool_t cuda_async_memory_resource::pool_handle() const noexcept { return pool_->handle; }

cuda_device_id cuda_async_memory_resource::device() const noexcept { return pool_->device; }

void* cuda_async_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return detail::allocate_from_pool(pool_->handle, bytes, stream,
                                    "cuda_async_memory_resource (cudaMallocFromPoolAsync)");
}

void cuda_async_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  detail::free_to_pool(ptr, stream);
}

bool cuda_async_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* async = dynamic_cast<cuda_async_memory_resource const*>(&other);
  return async != nullptr && async->pool_handle() == pool_handle();
}

}  // namespace rmm::mr
