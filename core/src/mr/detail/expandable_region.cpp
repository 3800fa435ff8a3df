// SPDX-License-Identifier: Apache-2.0
#include "expandable_region.hpp"
#include "expandable_region_contents.hpp"
#include "staged_copy.hpp"

#include "../../detail/cuda_driver.hpp"
#include "../../detail/device_context_scope.hpp"

#include <rmm/aligned.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>

namespace rmm::mr::detail {

namespace {

/// `shareable`: the memory can be exported to another process as a POSIX file descriptor
/// (cuMemExportToShareableHandle), which CUDA IPC of its blocks needs (the preload shim's).
CUmemAllocationProp device_allocation(int device, bool shareable)
{
  CUmemAllocationProp prop{};
  prop.type          = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id   = device;
  if (shareable) { prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; }
  return prop;
}

rmm::detail::cuda_driver const& cu() { return rmm::detail::cuda_driver_table(); }

/// Addresses reserved per byte of capacity: room for free granules to move to the end.
constexpr std::size_t address_factor = 8;

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

std::unique_ptr<expandable_region> expandable_region::create(int device,
                                                             std::size_t capacity,
                                                             bool exact_capacity,
                                                             bool movable_granules)
{
  auto const& driver = cu();
  rmm::detail::device_context_scope const context{device};
  CUdevice handle{};
  int supported = 0;
  if (driver.cuDeviceGet(&handle, device) != CUDA_SUCCESS ||
      driver.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, handle) !=
        CUDA_SUCCESS ||
      supported == 0) {
    return nullptr;
  }

  int posix_handles = 0;
  bool const shareable =
    driver.cuDeviceGetAttribute(&posix_handles, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                                handle) == CUDA_SUCCESS &&
    posix_handles != 0;
  auto const prop = device_allocation(device, shareable);
  std::size_t granularity{};
  if (driver.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS ||
      granularity == 0) {
    return nullptr;
  }
  // A maximum is kept by mapping no more than the granules it holds whole; any other capacity is a
  // bound on mapped memory only, rounded up.
  capacity = exact_capacity ? align_down(capacity, granularity) : align_up(capacity, granularity);
  if (capacity == 0) { return nullptr; }
  // Addresses for several times the capacity: free granules can move to the end, and memory given
  // back in the middle (release) leaves holes that growth at the end does not need to fill. Just
  // the capacity when the driver will not reserve that much.
  CUdeviceptr base{};
  std::size_t addresses =
    capacity <= std::numeric_limits<std::size_t>::max() / address_factor ? capacity * address_factor : capacity;
  auto result = driver.cuMemAddressReserve(&base, addresses, granularity, 0, 0);
  if (result != CUDA_SUCCESS && addresses != capacity) {
    RMM_LOG_WARN(
      "expandable pool region: {} for {} of addresses; reserving the pool's {} only, so free memory "
      "moves or is given back while that room lasts",
      describe("cuMemAddressReserve", result), rmm::format_bytes(addresses), rmm::format_bytes(capacity));
    addresses = capacity;
    result    = driver.cuMemAddressReserve(&base, addresses, granularity, 0, 0);
  }
  if (result != CUDA_SUCCESS) {
    RMM_LOG_WARN("expandable pool region: {}; the pool grows in separate chunks instead",
                 describe("cuMemAddressReserve", result));
    return nullptr;
  }
  auto region = std::make_unique<expandable_region>(device, static_cast<std::uintptr_t>(base), addresses, capacity,
                                                    granularity, movable_granules);
  region->shareable_ = shareable;
  return region;
}

expandable_region::expandable_region(int device,
                                     std::uintptr_t base,
                                     std::size_t addresses,
                                     std::size_t capacity,
                                     std::size_t granularity,
                                     bool movable_granules)
  : device_{device},
    base_{base},
    addresses_{addresses},
    capacity_{capacity},
    granularity_{granularity},
    movable_granules_{movable_granules}
{
}

expandable_region::~expandable_region()
{
  {
    rmm::detail::device_context_scope const context{device_};
    RMM_CU_ASSERT_SUCCESS(cuCtxSynchronize());
  }
  if (!suspended()) { shrink_to(base_); }  // a suspended region holds no device memory
  report("cuMemAddressFree", cu().cuMemAddressFree(static_cast<CUdeviceptr>(base_), addresses_));
}

CUmemAllocationProp expandable_region::allocation_properties() const noexcept
{
  return device_allocation(device_, shareable_);
}

bool expandable_region::movable(std::uintptr_t address) const noexcept
{
  if (address < base_ || address >= end()) { return false; }
  auto const index = slots_[slot_of(address)];
  return index != hole && physicals_[index].granules == 1;
}

CUresult expandable_region::map_at(std::uint32_t index, std::size_t first) noexcept
{
  auto& p      = physicals_[index];
  auto const r = cu().cuMemMap(static_cast<CUdeviceptr>(address_of(first)), p.granules * granularity_, 0, p.handle, 0);
  if (r == CUDA_SUCCESS) {
    p.first = first;
    std::fill_n(slots_.begin() + static_cast<std::ptrdiff_t>(first), p.granules, index);
  }
  return r;
}

CUresult expandable_region::map_new(std::size_t first,
                                    std::size_t granules,
                                    std::uint32_t& index,
                                    char const*& failed_call) noexcept
{
  CUmemGenericAllocationHandle handle{};
  failed_call  = "cuMemCreate";
  auto prop    = allocation_properties();
  auto created = cu().cuMemCreate(&handle, granules * granularity_, &prop, 0);
  if (created != CUDA_SUCCESS && created != CUDA_ERROR_OUT_OF_MEMORY && shareable_) {
    // A driver that will not make this memory shareable (a container without the handle type):
    // plain memory serves, only its sharing with other processes is lost.
    RMM_LOG_WARN("expandable pool region: {}; its memory cannot be shared with other processes from now on",
                 describe("cuMemCreate(shareable)", created));
    shareable_ = false;
    prop       = device_allocation(device_, false);
    created    = cu().cuMemCreate(&handle, granules * granularity_, &prop, 0);
  }
  if (created != CUDA_SUCCESS) { return created; }
  failed_call = "cuMemMap";
  try {
    if (spare_.empty()) {
      physicals_.push_back({});
      index = static_cast<std::uint32_t>(physicals_.size() - 1);
    } else {
      index = spare_.back();
      spare_.pop_back();
    }
    spare_.reserve(physicals_.size());  // room for every entry: releasing one never allocates
  } catch (...) {
    report("cuMemRelease", cu().cuMemRelease(handle));
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  physicals_[index] = {handle, first, granules};
  if (auto const r = map_at(index, first); r != CUDA_SUCCESS) {
    report("cuMemRelease", cu().cuMemRelease(handle));
    physicals_[index] = {};
    spare_.push_back(index);
    return r;
  }
  mapped_granules_ += granules;
  return CUDA_SUCCESS;
}

void expandable_region::unmap(std::uint32_t index, bool release) noexcept
{
  auto& p = physicals_[index];
  report("cuMemUnmap", cu().cuMemUnmap(static_cast<CUdeviceptr>(address_of(p.first)), p.granules * granularity_));
  std::fill_n(slots_.begin() + static_cast<std::ptrdiff_t>(p.first), p.granules, hole);
  if (release) { give_back(index); }
}

void expandable_region::give_back(std::uint32_t index) noexcept
{
  auto& p = physicals_[index];
  report("cuMemRelease", cu().cuMemRelease(p.handle));
  mapped_granules_ -= p.granules;
  p = {};
  spare_.push_back(index);  // reserved by map_new: cannot throw
}

void expandable_region::trim_holes() noexcept
{
  while (!slots_.empty() && slots_.back() == hole) { slots_.pop_back(); }
}

CUresult expandable_region::grant_access(std::uintptr_t address, std::size_t bytes) const noexcept
{
  CUmemAccessDesc access{};
  access.location = device_allocation(device_, false).location;
  access.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return cu().cuMemSetAccess(static_cast<CUdeviceptr>(address), bytes, &access, 1);
}

std::size_t expandable_region::find_holes(std::size_t count) const noexcept
{
  std::size_t run = 0;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    run = slots_[i] == hole ? run + 1 : 0;
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
  std::vector<std::uint32_t> made;
  made.reserve(count);
  if (at_end) { slots_.resize(slots_.size() + count, hole); }
  rmm::detail::device_context_scope const context{device_};
  // Small growth with movable granules: one allocation per granule, each movable later. Otherwise
  // one in all.
  auto const per_allocation = movable_granules_ && bytes <= movable_limit ? std::size_t{1} : count;
  CUresult result           = CUDA_SUCCESS;
  char const* failed_call   = "";
  for (std::size_t done = 0; done < count && result == CUDA_SUCCESS; done += per_allocation) {
    std::uint32_t index{};
    result = map_new(first + done, per_allocation, index, failed_call);
    if (result == CUDA_SUCCESS) { made.push_back(index); }
  }
  if (result == CUDA_SUCCESS) {
    failed_call = "cuMemSetAccess";
    result      = grant_access(address_of(first), bytes);
  }
  if (result != CUDA_SUCCESS) {
    for (auto const index : made) { unmap(index, true); }
    trim_holes();
    auto message = fmt::format("could not {} {} of device memory: {}",
                               std::string_view{failed_call} == "cuMemCreate" ? "allocate" : "map",
                               rmm::format_bytes_exact(bytes), describe(failed_call, result));
    if (result == CUDA_ERROR_OUT_OF_MEMORY) { throw rmm::out_of_memory{message}; }
    throw rmm::bad_alloc{message};
  }
  return memory_range{address_of(first), bytes};
}

expandable_region::recycled expandable_region::recycle(std::vector<std::uintptr_t> const& granules)
{
  recycled result;
  auto const room = recyclable_bytes() / granularity_;
  // Everything that allocates, before any granule is unmapped: after that nothing may throw.
  slots_.reserve(slots_.size() + granules.size());
  result.stayed.reserve(granules.size());
  result.lost.reserve(granules.size());
  std::vector<std::uintptr_t> moved_from;
  moved_from.reserve(granules.size());
  rmm::detail::device_context_scope const context{device_};
  auto const first  = slots_.size();
  std::size_t moved = 0;
  bool refused      = false;
  for (auto const address : granules) {
    if (refused || moved == room || !movable(address)) {
      result.stayed.push_back(address);
      continue;
    }
    auto const index = slots_[slot_of(address)];
    unmap(index, false);
    slots_.push_back(hole);
    if (map_at(index, first + moved) == CUDA_SUCCESS) {
      ++moved;
      moved_from.push_back(address);
      continue;
    }
    // Refused at the end: back where it was, or, failing that, back to the device.
    refused = true;
    slots_.pop_back();
    if (map_at(index, slot_of(address)) == CUDA_SUCCESS && grant_access(address, granularity_) == CUDA_SUCCESS) {
      result.stayed.push_back(address);
    } else {
      if (slots_[slot_of(address)] == index) {
        unmap(index, true);
      } else {
        give_back(index);  // mapped nowhere
      }
      result.lost.push_back(address);
    }
  }
  if (moved > 0) {
    auto const start = address_of(first);
    if (auto const r = grant_access(start, moved * granularity_); r != CUDA_SUCCESS) {
      // Mapped but not accessible: of no use to anyone. Give the memory back to the device.
      report("cuMemSetAccess", r);
      for (std::size_t i = first; i < first + moved; ++i) { unmap(slots_[i], true); }
      trim_holes();
      result.lost.insert(result.lost.end(), moved_from.begin(), moved_from.end());
      return result;
    }
    result.moved = memory_range{start, moved * granularity_};
  }
  trim_holes();
  return result;
}

std::vector<memory_range> expandable_region::allocations_within(memory_range range) const
{
  std::vector<memory_range> found;
  if (range.start >= end() || range.start + range.size <= base_) { return found; }
  auto const first = align_up(std::max(range.start, base_) - base_, granularity_) / granularity_;
  auto const last  = std::min(align_down(range.start + range.size - base_, granularity_) / granularity_, slots_.size());
  for (auto slot = first; slot < last;) {
    auto const index = slots_[slot];
    if (index == hole) {
      ++slot;
      continue;
    }
    auto const& p = physicals_[index];
    if (p.first >= first && p.first + p.granules <= last) {
      found.push_back({address_of(p.first), p.granules * granularity_});
    }
    slot = std::max(slot + 1, p.first + p.granules);
  }
  return found;
}

std::size_t expandable_region::release(std::vector<memory_range> const& ranges) noexcept
{
  rmm::detail::device_context_scope const context{device_};
  auto const before = mapped_bytes();
  for (auto const& r : ranges) {
    if (r.start < base_ || r.start >= end()) { continue; }
    auto const index = slots_[slot_of(r.start)];
    if (index != hole && address_of(physicals_[index].first) == r.start) { unmap(index, true); }
  }
  trim_holes();
  return before - mapped_bytes();
}

std::uintptr_t expandable_region::shrink_to(std::uintptr_t from) noexcept
{
  rmm::detail::device_context_scope const context{device_};
  auto const first = from <= base_ ? 0 : align_up(from - base_, granularity_) / granularity_;
  for (auto i = slots_.size(); i > first; --i) {
    auto const index = slots_[i - 1];
    if (index == hole) { continue; }
    if (physicals_[index].first < first) { break; }  // mapped whole, and it starts below `from`
    unmap(index, true);
  }
  trim_holes();
  return end();
}

}  // namespace rmm::mr::detail
