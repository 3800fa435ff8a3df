#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>

#include <fmt/format.h>

#include <cstdint>

namespace rmm::mr {

namespace {

void check_async_support(cuda_device_id device)
{
  int pools_supported{};
  RMM_CUDA_TRY(cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, device.value()));
  RMM_EXPECTS(pools_supported != 0,
              fmt::format("cuda_async_memory_resource: device {} does not support memory pools (cudaMallocAsync)",
                          device.value()));
}

void check_handle_support(cuda_device_id device, cuda_async_memory_resource::allocation_handle_type handle_type)
{
  if (handle_type == cuda_async_memory_resource::allocation_handle_type::none) { return; }
  int supported{};
  RMM_CUDA_TRY(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolSupportedHandleTypes, device.value()));
  RMM_EXPECTS((supported & static_cast<int>(handle_type)) != 0,
              fmt::format("cuda_async_memory_resource: device {} cannot export pool memory with handle type {:#x} "
                          "(supported handle types: {:#x})",
                          device.value(),
                          static_cast<int>(handle_type),
                          supported));
}

}  // namespace

struct cuda_async_memory_resource::pool {
  cudaMemPool_t handle{};
  cuda_device_id device;

  pool(cuda_device_id dev, allocation_handle_type handle_type) : device{dev}
  {
    cudaMemPoolProps props{};
    props.allocType     = cudaMemAllocationTypePinned;
    props.handleTypes   = static_cast<cudaMemAllocationHandleType>(handle_type);
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id   = device.value();
    RMM_CUDA_TRY(cudaMemPoolCreate(&handle, &props));
  }
  ~pool() { RMM_ASSERT_CUDA_SUCCESS(cudaMemPoolDestroy(handle)); }
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
  auto threshold = static_cast<std::uint64_t>(release_threshold.value_or(available_device_memory().second));
  RMM_CUDA_TRY(cudaMemPoolSetAttribute(pool_->handle, cudaMemPoolAttrReleaseThreshold, &threshold));

  if (initial_pool_size.value_or(0) > 0) {
    // Through allocate(), which refuses a size no allocation can have before CUDA sees it.
    auto const stream = cuda_stream_view{};
    void* ptr         = allocate(stream, *initial_pool_size);
    deallocate(stream, ptr, *initial_pool_size);
    stream.synchronize();
  }
}

cudaMemPool_t cuda_async_memory_resource::pool_handle() const noexcept { return pool_->handle; }

cuda_device_id cuda_async_memory_resource::device() const noexcept { return pool_->device; }

void* cuda_async_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  void* ptr{nullptr};
  detail::check_allocation(cudaMallocFromPoolAsync(&ptr, bytes, pool_->handle, stream.value()),
                           bytes,
                           "cuda_async_memory_resource (cudaMallocFromPoolAsync)");
  return ptr;
}

void cuda_async_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  RMM_ASSERT_CUDA_SUCCESS(cudaFreeAsync(ptr, stream.value()));
}

bool cuda_async_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* async = dynamic_cast<cuda_async_memory_resource const*>(&other);
  return async != nullptr && async->pool_handle() == pool_handle();
}

}  // namespace rmm::mr
