#include "expandable_region.hpp"

#include "../../detail/cuda_driver.hpp"

#include <rmm/aligned.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>

#include <fmt/format.h>

#include <string>

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

rmm::detail::cuda_driver const& cu() { return rmm::detail::cuda_driver_table(); }

/// Makes `device`'s primary context current for the scope (the VMM calls need a context), and
/// restores the previous context. Failures are left to the calls that need the context.
class primary_context_scope {
 public:
  explicit primary_context_scope(int device) noexcept
  {
    try {
      if (cu().cuCtxGetCurrent(&previous_) != CUDA_SUCCESS) { return; }
      CUdevice current{};
      if (previous_ != nullptr && cu().cuCtxGetDevice(&current) == CUDA_SUCCESS && current == device) { return; }
      restore_ = cu().cuCtxSetCurrent(rmm::detail::primary_context(device)) == CUDA_SUCCESS;
    } catch (...) {
    }
  }
  ~primary_context_scope()
  {
    if (restore_) { (void)cu().cuCtxSetCurrent(previous_); }
  }
  primary_context_scope(primary_context_scope const&)            = delete;
  primary_context_scope& operator=(primary_context_scope const&) = delete;

 private:
  CUcontext previous_{};
  bool restore_{false};
};

/// "cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"
std::string describe(char const* call, CUresult result)
{
  return std::string{call} + ": " + rmm::detail::describe_cu_result(result);
}

/// A driver failure while the process exits (the context is gone) is not worth a report.
bool exiting(CUresult result)
{
  return result == CUDA_ERROR_DEINITIALIZED || result == CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

void report(char const* call, CUresult result) noexcept
{
  if (result == CUDA_SUCCESS || exiting(result)) { return; }
  try {
    RMM_LOG_ERROR("expandable pool region: {}", describe(call, result));
  } catch (...) {  // reporting must not throw from a destructor
  }
}

}  // namespace

std::unique_ptr<expandable_region> expandable_region::create(int device, std::size_t capacity, bool exact_capacity)
{
  auto const& driver = cu();
  primary_context_scope const context{device};
  CUdevice handle{};
  int supported = 0;
  if (driver.cuDeviceGet(&handle, device) != CUDA_SUCCESS ||
      driver.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, handle) !=
        CUDA_SUCCESS ||
      supported == 0) {
    return nullptr;
  }

  auto const prop = device_allocation(device);
  std::size_t granularity{};
  if (driver.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS ||
      granularity == 0) {
    return nullptr;
  }
  // A maximum is kept by mapping no more than the granules it holds whole; any other capacity is a
  // bound on addresses only, rounded up.
  capacity = exact_capacity ? align_down(capacity, granularity) : align_up(capacity, granularity);
  if (capacity == 0) { return nullptr; }
  CUdeviceptr base{};
  if (auto const result = driver.cuMemAddressReserve(&base, capacity, granularity, 0, 0); result != CUDA_SUCCESS) {
    RMM_LOG_WARN("expandable pool region: {}; the pool grows in separate chunks instead",
                 describe("cuMemAddressReserve", result));
    return nullptr;
  }
  return std::make_unique<expandable_region>(device, static_cast<std::uintptr_t>(base), capacity, granularity);
}

expandable_region::expandable_region(int device, std::uintptr_t base, std::size_t capacity, std::size_t granularity)
  : device_{device}, base_{base}, capacity_{capacity}, granularity_{granularity}
{
}

expandable_region::~expandable_region()
{
  {
    primary_context_scope const context{device_};
    RMM_CU_ASSERT_SUCCESS(cuCtxSynchronize());
  }
  shrink_to(base_);
  report("cuMemAddressFree", cu().cuMemAddressFree(static_cast<CUdeviceptr>(base_), capacity_));
}

memory_range expandable_region::grow(std::size_t bytes)
{
  bytes = align_up(bytes, granularity_);
  if (bytes > capacity_ - mapped_) {
    throw rmm::out_of_memory{fmt::format("the pool's address range is full: {} mapped of {}, {} more requested",
                                         rmm::format_bytes(mapped_), rmm::format_bytes(capacity_),
                                         rmm::format_bytes(bytes))};
  }
  primary_context_scope const context{device_};
  auto const prop = device_allocation(device_);
  CUmemGenericAllocationHandle handle{};
  if (auto const result = cu().cuMemCreate(&handle, bytes, &prop, 0); result != CUDA_SUCCESS) {
    auto message = fmt::format("could not allocate {} of device memory: {}", rmm::format_bytes_exact(bytes),
                               describe("cuMemCreate", result));
    if (result == CUDA_ERROR_OUT_OF_MEMORY) { throw rmm::out_of_memory{message}; }
    throw rmm::bad_alloc{message};
  }
  auto const address = static_cast<CUdeviceptr>(end());
  auto result        = cu().cuMemMap(address, bytes, 0, handle, 0);
  if (result == CUDA_SUCCESS) {
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    result          = cu().cuMemSetAccess(address, bytes, &access, 1);
    if (result != CUDA_SUCCESS) { report("cuMemUnmap", cu().cuMemUnmap(address, bytes)); }
  }
  if (result != CUDA_SUCCESS) {
    report("cuMemRelease", cu().cuMemRelease(handle));
    throw rmm::bad_alloc{fmt::format("could not map {} of device memory: {}", rmm::format_bytes_exact(bytes),
                                     describe("cuMemMap/cuMemSetAccess", result))};
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
    auto const address = static_cast<CUdeviceptr>(base_) + s.offset;
    report("cuMemUnmap", cu().cuMemUnmap(address, s.size));
    report("cuMemRelease", cu().cuMemRelease(s.handle));
    segments_.pop_back();
    mapped_ = s.offset;
  }
  return end();
}

}  // namespace rmm::mr::detail
