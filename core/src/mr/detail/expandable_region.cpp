#include "expandable_region.hpp"

#include "../../detail/cuda_driver.hpp"

#include <rmm/aligned.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>

#include <fmt/format.h>

#include <limits>
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

/// Addresses reserved per byte of capacity: room for free granules to move to the end.
constexpr std::size_t address_factor = 8;

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
  // bound on mapped memory only, rounded up.
  capacity = exact_capacity ? align_down(capacity, granularity) : align_up(capacity, granularity);
  if (capacity == 0) { return nullptr; }
  // Addresses for several times the capacity, so that free granules can move to the end; just
  // the capacity when the driver will not reserve that much (then they move while room lasts).
  CUdeviceptr base{};
  std::size_t addresses =
    capacity <= std::numeric_limits<std::size_t>::max() / address_factor ? capacity * address_factor : capacity;
  auto result = driver.cuMemAddressReserve(&base, addresses, granularity, 0, 0);
  if (result != CUDA_SUCCESS && addresses != capacity) {
    addresses = capacity;
    result    = driver.cuMemAddressReserve(&base, addresses, granularity, 0, 0);
  }
  if (result != CUDA_SUCCESS) {
    RMM_LOG_WARN("expandable pool region: {}; the pool grows in separate chunks instead",
                 describe("cuMemAddressReserve", result));
    return nullptr;
  }
  return std::make_unique<expandable_region>(device, static_cast<std::uintptr_t>(base), addresses, capacity,
                                             granularity);
}

expandable_region::expandable_region(int device,
                                     std::uintptr_t base,
                                     std::size_t addresses,
                                     std::size_t capacity,
                                     std::size_t granularity)
  : device_{device}, base_{base}, addresses_{addresses}, capacity_{capacity}, granularity_{granularity}
{
}

expandable_region::~expandable_region()
{
  {
    primary_context_scope const context{device_};
    RMM_CU_ASSERT_SUCCESS(cuCtxSynchronize());
  }
  shrink_to(base_);
  report("cuMemAddressFree", cu().cuMemAddressFree(static_cast<CUdeviceptr>(base_), addresses_));
}

CUresult expandable_region::map_granule(std::uintptr_t address, std::uint32_t index, std::uint32_t offset) noexcept
{
  auto const result =
    cu().cuMemMap(static_cast<CUdeviceptr>(address), granularity_, offset * granularity_, physicals_[index].handle, 0);
  if (result == CUDA_SUCCESS) {
    ++physicals_[index].mapped;
    slots_[(address - base_) / granularity_] = {index, offset};
  }
  return result;
}

void expandable_region::unmap_slot(std::size_t i) noexcept
{
  auto const s = slots_[i];
  if (s.physical == slot::hole) { return; }
  report("cuMemUnmap", cu().cuMemUnmap(static_cast<CUdeviceptr>(base_ + i * granularity_), granularity_));
  slots_[i] = {};
  auto& p   = physicals_[s.physical];
  if (--p.mapped == 0) {
    report("cuMemRelease", cu().cuMemRelease(p.handle));
    p.handle = {};
  }
}

CUresult expandable_region::grant_access(std::uintptr_t address, std::size_t bytes) const noexcept
{
  CUmemAccessDesc access{};
  access.location = device_allocation(device_).location;
  access.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return cu().cuMemSetAccess(static_cast<CUdeviceptr>(address), bytes, &access, 1);
}

std::size_t expandable_region::find_holes(std::size_t count) const noexcept
{
  std::size_t run = 0;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    run = slots_[i].physical == slot::hole ? run + 1 : 0;
    if (run == count) { return i + 1 - count; }
  }
  return slots_.size();
}

memory_range expandable_region::grow(std::size_t bytes)
{
  bytes             = align_up(bytes, granularity_);
  auto const count  = bytes / granularity_;
  auto const mapped = mapped_bytes();
  if (bytes > capacity_ - mapped) {
    throw rmm::out_of_memory{fmt::format("the pool's region is full: {} mapped of {}, {} more requested",
                                         rmm::format_bytes(mapped), rmm::format_bytes(capacity_),
                                         rmm::format_bytes(bytes))};
  }
  auto first        = slots_.size();
  bool const at_end = end() - base_ + bytes <= addresses_;
  if (!at_end) {
    first = find_holes(count);
    if (first == slots_.size()) {
      throw rmm::out_of_memory{fmt::format(
        "the pool's addresses are used up: {} more would fit under its limit ({} mapped of {}), but no hole of "
        "its free addresses is that large",
        rmm::format_bytes(bytes), rmm::format_bytes(mapped), rmm::format_bytes(capacity_))};
    }
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
  auto const index = static_cast<std::uint32_t>(physicals_.size());
  physicals_.push_back({handle, 0});
  if (at_end) { slots_.resize(slots_.size() + count); }
  auto const address = base_ + first * granularity_;
  // Each granule is a mapping of its own, so that recycle() can move it alone later.
  CUresult result  = CUDA_SUCCESS;
  std::size_t done = 0;
  for (; done < count && result == CUDA_SUCCESS; ++done) {
    result = map_granule(address + done * granularity_, index, static_cast<std::uint32_t>(done));
  }
  if (result == CUDA_SUCCESS) { result = grant_access(address, bytes); }
  if (result != CUDA_SUCCESS) {
    for (std::size_t i = first; i < first + count; ++i) { unmap_slot(i); }
    if (physicals_.back().mapped == 0 && physicals_.back().handle != CUmemGenericAllocationHandle{}) {
      report("cuMemRelease", cu().cuMemRelease(handle));  // not one granule was mapped
    }
    physicals_.pop_back();
    while (!slots_.empty() && slots_.back().physical == slot::hole) { slots_.pop_back(); }
    throw rmm::bad_alloc{fmt::format("could not map {} of device memory: {}", rmm::format_bytes_exact(bytes),
                                     describe("cuMemMap/cuMemSetAccess", result))};
  }
  mapped_granules_ += count;
  return memory_range{address, bytes};
}

memory_range expandable_region::recycle(std::vector<std::uintptr_t> const& granules)
{
  auto const count = granules.size();
  auto const bytes = count * granularity_;
  if (count == 0 || bytes > recyclable_bytes()) {
    throw rmm::bad_alloc{fmt::format("cannot move {} to the end of the pool's region: {} of addresses left",
                                     rmm::format_bytes(bytes), rmm::format_bytes(recyclable_bytes()))};
  }
  primary_context_scope const context{device_};
  auto const first   = slots_.size();
  auto const address = end();
  slots_.resize(first + count);
  // Mapped at the end before being unmapped where they were: a failure changes nothing.
  CUresult result  = CUDA_SUCCESS;
  std::size_t done = 0;
  for (; done < count && result == CUDA_SUCCESS; ++done) {
    auto const source = slots_[(granules[done] - base_) / granularity_];
    result            = source.physical == slot::hole ? CUDA_ERROR_INVALID_VALUE
                                                      : map_granule(address + done * granularity_, source.physical, source.offset);
  }
  if (result == CUDA_SUCCESS) { result = grant_access(address, bytes); }
  if (result != CUDA_SUCCESS) {
    for (std::size_t i = first; i < first + count; ++i) { unmap_slot(i); }  // the sources still map them
    slots_.resize(first);
    throw rmm::bad_alloc{fmt::format("could not move {} of free device memory to the end of the pool's region: {}",
                                     rmm::format_bytes_exact(bytes), describe("cuMemMap/cuMemSetAccess", result))};
  }
  for (auto const g : granules) { unmap_slot((g - base_) / granularity_); }
  return memory_range{address, bytes};
}

std::uintptr_t expandable_region::shrink_to(std::uintptr_t from) noexcept
{
  primary_context_scope const context{device_};
  auto const first = from <= base_ ? 0 : align_up(from - base_, granularity_) / granularity_;
  for (auto i = slots_.size(); i > first; --i) {
    if (slots_[i - 1].physical != slot::hole) {
      unmap_slot(i - 1);
      --mapped_granules_;
    }
  }
  if (first < slots_.size()) { slots_.resize(first); }
  while (!slots_.empty() && slots_.back().physical == slot::hole) { slots_.pop_back(); }
  return end();
}

}  // namespace rmm::mr::detail
