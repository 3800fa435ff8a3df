#include "expandable_region.hpp"

#include <rmm/aligned.hpp>
#include <rmm/detail/format.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>

#include <cuda_runtime_api.h>

#include <fmt/format.h>

namespace rmm::mr::detail {

namespace {

CUmemAllocationProp device_allocation(int device)
{
  CUmemAllocationProp prop{};
  prop.type          = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id   = device;
  return prop;
}

/// Makes `device`'s primary context current for the scope (the VMM calls need a context), and
/// restores the previous device.
class primary_context_scope {
 public:
  explicit primary_context_scope(int device)
  {
    if (cudaGetDevice(&previous_) != cudaSuccess) { previous_ = device; }
    if (cudaSetDevice(device) != cudaSuccess) { (void)cudaGetLastError(); }
    restore_ = previous_ != device;
  }
  ~primary_context_scope()
  {
    if (restore_ && cudaSetDevice(previous_) != cudaSuccess) { (void)cudaGetLastError(); }
  }
  primary_context_scope(primary_context_scope const&)            = delete;
  primary_context_scope& operator=(primary_context_scope const&) = delete;

 private:
  int previous_{};
  bool restore_{false};
};

/// A driver failure while the process exits (the context is gone) is not worth a report.
bool exiting(CUresult result) { return result == CUDA_ERROR_DEINITIALIZED || result == CUDA_ERROR_CONTEXT_IS_DESTROYED; }

void report(vmm_driver const& driver, char const* call, CUresult result) noexcept
{
  if (result == CUDA_SUCCESS || exiting(result)) { return; }
  try {
    RMM_LOG_ERROR("expandable pool region: {}", describe(driver, call, result));
  } catch (...) {  // reporting must not throw from a destructor
  }
}

}  // namespace

std::unique_ptr<expandable_region> expandable_region::create(int device, std::size_t capacity, bool exact_capacity)
{
  auto const* driver = vmm_driver_entry_points();
  if (driver == nullptr) { return nullptr; }
  primary_context_scope const context{device};
  CUdevice handle{};
  int supported = 0;
  if (driver->device_get(&handle, device) != CUDA_SUCCESS ||
      driver->device_attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, handle) !=
        CUDA_SUCCESS ||
      supported == 0) {
    return nullptr;
  }

  auto const prop = device_allocation(device);
  std::size_t granularity{};
  if (driver->granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS ||
      granularity == 0) {
    return nullptr;
  }
  if (exact_capacity && capacity % granularity != 0) { return nullptr; }
  capacity = align_up(capacity, granularity);
  CUdeviceptr base{};
  if (auto const result = driver->address_reserve(&base, capacity, granularity, 0, 0); result != CUDA_SUCCESS) {
    RMM_LOG_WARN("expandable pool region: {}; the pool grows in separate chunks instead",
                 describe(*driver, "cuMemAddressReserve", result));
    return nullptr;
  }
  return std::make_unique<expandable_region>(*driver, device, static_cast<std::uintptr_t>(base), capacity, granularity);
}

expandable_region::expandable_region(
  vmm_driver const& driver, int device, std::uintptr_t base, std::size_t capacity, std::size_t granularity)
  : driver_{driver}, device_{device}, base_{base}, capacity_{capacity}, granularity_{granularity}
{
}

expandable_region::~expandable_region()
{
  {
    primary_context_scope const context{device_};
    if (auto const status = cudaDeviceSynchronize(); status != cudaSuccess) {
      rmm::detail::report_cuda_error_noexcept(status, "cudaDeviceSynchronize", __FILE__, __LINE__);
    }
  }
  shrink_to(base_);
  report(driver_, "cuMemAddressFree", driver_.address_free(static_cast<CUdeviceptr>(base_), capacity_));
}

memory_range expandable_region::grow(std::size_t bytes)
{
  bytes = align_up(bytes, granularity_);
  if (bytes > capacity_ - mapped_) {
    throw rmm::out_of_memory{fmt::format("the pool's address range is full: {} mapped of {}, {} more requested",
                                         rmm::detail::format_bytes(mapped_),
                                         rmm::detail::format_bytes(capacity_),
                                         rmm::detail::format_bytes(bytes))};
  }
  primary_context_scope const context{device_};
  auto const prop = device_allocation(device_);
  CUmemGenericAllocationHandle handle{};
  if (auto const result = driver_.create(&handle, bytes, &prop, 0); result != CUDA_SUCCESS) {
    auto message = fmt::format("could not allocate {} of device memory: {}",
                               rmm::detail::format_bytes_exact(bytes),
                               describe(driver_, "cuMemCreate", result));
    if (result == CUDA_ERROR_OUT_OF_MEMORY) { throw rmm::out_of_memory{message}; }
    throw rmm::bad_alloc{message};
  }
  auto const address = static_cast<CUdeviceptr>(end());
  auto result        = driver_.map(address, bytes, 0, handle, 0);
  if (result == CUDA_SUCCESS) {
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    result          = driver_.set_access(address, bytes, &access, 1);
    if (result != CUDA_SUCCESS) { report(driver_, "cuMemUnmap", driver_.unmap(address, bytes)); }
  }
  if (result != CUDA_SUCCESS) {
    report(driver_, "cuMemRelease", driver_.release(handle));
    throw rmm::bad_alloc{fmt::format("could not map {} of device memory: {}",
                                     rmm::detail::format_bytes_exact(bytes),
                                     describe(driver_, "cuMemMap/cuMemSetAccess", result))};
  }
  segments_.push_back({mapped_, bytes, handle});
  mapped_ += bytes;
  return memory_range{static_cast<std::uintptr_t>(address), bytes};
}

std::uintptr_t expandable_region::shrink_to(std::uintptr_t from) noexcept
{
  primary_context_scope const context{device_};
  while (!segments_.empty() && base_ + segments_.back().offset >= from) {
    auto const s       = segments_.back();
    auto const address = static_cast<CUdeviceptr>(base_ + s.offset);
    report(driver_, "cuMemUnmap", driver_.unmap(address, s.size));
    report(driver_, "cuMemRelease", driver_.release(s.handle));
    segments_.pop_back();
    mapped_ = s.offset;
  }
  return end();
}

}  // namespace rmm::mr::detail
