// SPDX-License-Identifier: Apache-2.0
// Suspending an expandable region: its device memory given back with its addresses kept, and
// mapped again at the same addresses with the same contents (a paused process's pools).

#include "expandable_region.hpp"
#include "expandable_region_contents.hpp"
#include "staged_copy.hpp"

#include "../../detail/cuda_driver.hpp"
#include "../../detail/device_context_scope.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/logger.hpp>

#include <fmt/format.h>

#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <new>
#include <optional>
#include <string>
#include <string_view>

namespace rmm::mr::detail {

namespace {

rmm::detail::cuda_driver const& cu() { return rmm::detail::cuda_driver_table(); }

/// Host copies come in transparent huge pages where the kernel gives them.
constexpr std::size_t huge_page = std::size_t{2} << 20;

std::string describe(char const* call, CUresult result)
{
  return std::string{call} + ": " + rmm::detail::describe_cu_result(result);
}

/// The host memory the kernel says it can still give without swapping (MemAvailable), or nothing
/// where it does not say.
std::optional<std::size_t> available_host_memory()
{
  std::ifstream meminfo{"/proc/meminfo"};
  constexpr std::string_view key{"MemAvailable:"};
  for (std::string line; std::getline(meminfo, line);) {
    if (!line.starts_with(key)) { continue; }
    std::size_t kib   = 0;
    auto const digits = line.find_first_not_of(' ', key.size());
    if (digits == std::string::npos) { return std::nullopt; }
    if (std::from_chars(line.data() + digits, line.data() + line.size(), kib).ec != std::errc{}) {
      return std::nullopt;
    }
    return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace

host_copy::host_copy(std::size_t bytes)
{
  if (bytes == 0) { return; }
  if (auto const available = available_host_memory(); available && *available < bytes) {
    throw rmm::out_of_memory{fmt::format("the host has {} of memory available for {} of device memory's contents",
                                         rmm::format_bytes(*available), rmm::format_bytes(bytes))};
  }
  auto const size = rmm::align_up(bytes, huge_page);
  data_ = static_cast<unsigned char*>(std::aligned_alloc(huge_page, size));  // NOLINT(cppcoreguidelines-no-malloc)
  if (data_ == nullptr) {
    throw rmm::out_of_memory{
      fmt::format("no host memory for {} of device memory's contents", rmm::format_bytes_exact(bytes))};
  }
  size_ = bytes;
  (void)::madvise(data_, size, MADV_HUGEPAGE);  // a hint: without it, 4 KiB pages
}

host_copy::~host_copy()
{
  std::free(data_);  // NOLINT(cppcoreguidelines-no-malloc)
}

bool host_copy::give_back_lazily() noexcept
{
  return data_ != nullptr && ::madvise(data_, rmm::align_up(size_, huge_page), MADV_FREE) == 0;
}

bool expandable_region::copy_contents(saved_contents const& saved, copy_direction direction)
{
  std::vector<host_piece> pieces;
  std::size_t offset = 0;
  for (auto const& r : saved.ranges) {
    pieces.push_back({r.start, saved.host->data() + offset, r.size});
    offset += r.size;
  }
  if (copier_ == nullptr) {
    try {
      copier_ = std::make_unique<staged_copier>();
    } catch (rmm::out_of_memory const& e) {
      RMM_LOG_WARN("expandable pool region: {}; copying the contents without staging, more slowly", e.what());
    }
  }
  if (copier_ != nullptr) {
    direction == copy_direction::to_host ? copier_->to_host(pieces) : copier_->to_device(pieces);
    return true;
  }
  for (auto const& p : pieces) {
    auto const to_host = direction == copy_direction::to_host;
    auto const result  = to_host ? cu().cuMemcpyDtoH_v2(p.host, static_cast<CUdeviceptr>(p.device), p.bytes)
                                 : cu().cuMemcpyHtoD_v2(static_cast<CUdeviceptr>(p.device), p.host, p.bytes);
    if (result != CUDA_SUCCESS) {
      throw rmm::cuda_error{fmt::format(
        "could not copy {} of device memory at {:#x} {}: {}", rmm::format_bytes_exact(p.bytes), p.device,
        to_host ? "to the host" : "back from the host", describe(to_host ? "cuMemcpyDtoH" : "cuMemcpyHtoD", result))};
    }
  }
  return false;
}

std::vector<std::uint32_t> expandable_region::live_allocations() const
{
  std::vector<std::uint32_t> live;
  for (std::size_t slot = 0; slot < slots_.size();) {
    auto const index = slots_[slot];
    if (index == hole) {
      ++slot;
      continue;
    }
    live.push_back(index);
    slot = physicals_[index].first + physicals_[index].granules;
  }
  return live;
}

void expandable_region::note_contents(std::vector<std::uint32_t> const& live,
                                      std::vector<memory_range> const& unused,
                                      saved_contents& saved) const
{
  // Each allocation's bytes outside the free ranges (a free range may span two).
  auto free       = unused.begin();
  auto const keep = [&saved](std::uintptr_t from, std::uintptr_t to) {
    saved.ranges.push_back({from, to - from});
    saved.bytes += to - from;
  };
  for (auto const index : live) {
    auto const start = address_of(physicals_[index].first);
    auto const end   = start + physicals_[index].granules * granularity_;
    while (free != unused.end() && free->start + free->size <= start) { ++free; }
    auto at = start;
    for (auto f = free; f != unused.end() && f->start < end; ++f) {
      if (f->start > at) { keep(at, f->start); }
      at = std::max(at, std::min(end, f->start + f->size));
    }
    if (at < end) { keep(at, end); }
  }
}

void expandable_region::take_host_memory(saved_contents& saved)
{
  if (kept_host_ != nullptr && kept_host_->size() >= saved.bytes) {
    saved.host          = std::move(kept_host_);
    saved.host_was_kept = true;
    return;
  }
  try {
    saved.host = std::make_unique<host_copy>(saved.bytes);
  } catch (rmm::out_of_memory const&) {
    if (kept_host_ == nullptr) { throw; }
    kept_host_.reset();  // too small for these contents, and in the way of a copy that is not
    saved.host = std::make_unique<host_copy>(saved.bytes);
  }
  kept_host_.reset();  // the new copy takes its place
}

void expandable_region::unmap_for_suspend(std::vector<std::uint32_t> const& live, saved_contents& saved)
{
  // Everything is unmapped before anything is released: should the driver refuse one, those
  // unmapped before it are mapped again with their memory, and the region is as it was.
  for (std::size_t i = 0; i < live.size(); ++i) {
    auto const& p = physicals_[live[i]];
    if (auto const r = cu().cuMemUnmap(static_cast<CUdeviceptr>(address_of(p.first)), p.granules * granularity_);
        r != CUDA_SUCCESS) {
      remap_after_failed_suspend(live, i);
      if (saved.host_was_kept) { keep_host_copy(std::move(saved.host), kept_host_held_); }
      throw rmm::cuda_error{fmt::format("could not unmap {} of device memory at {:#x}: {}",
                                        rmm::format_bytes_exact(p.granules * granularity_), address_of(p.first),
                                        describe("cuMemUnmap", r))};
    }
  }
}

expandable_region::suspension expandable_region::suspend(std::vector<memory_range> const& unused, bool discard)
{
  if (suspended()) { throw rmm::logic_error{"the region is suspended already"}; }
  auto saved      = std::make_unique<saved_contents>();
  auto const live = live_allocations();
  if (!discard) { note_contents(live, unused, *saved); }
  rmm::detail::device_context_scope const context{device_};
  take_host_memory(*saved);
  suspension result{0, saved->bytes, false};
  try {
    result.staged = copy_contents(*saved, copy_direction::to_host);
  } catch (...) {
    if (saved->host_was_kept) { keep_host_copy(std::move(saved->host), kept_host_held_); }
    throw;
  }
  unmap_for_suspend(live, *saved);
  for (auto const index : live) {
    auto& p = physicals_[index];
    if (auto const r = cu().cuMemRelease(p.handle); r != CUDA_SUCCESS) {
      // Unmapped all the same: the addresses are free for restore(); the memory stays the driver's.
      RMM_LOG_ERROR("expandable pool region: {}", describe("cuMemRelease", r));
    } else {
      result.device_bytes += p.granules * granularity_;
    }
    p.handle = {};  // its place (first, granules, the slots) stays for restore()
  }
  suspended_ = std::move(saved);
  return result;
}

void expandable_region::remap_after_failed_suspend(std::vector<std::uint32_t> const& live,
                                                   std::size_t unmapped) noexcept
{
  for (std::size_t i = 0; i < unmapped; ++i) {
    auto const& p      = physicals_[live[i]];
    auto const address = address_of(p.first);
    auto const bytes   = p.granules * granularity_;
    auto r             = cu().cuMemMap(static_cast<CUdeviceptr>(address), bytes, 0, p.handle, 0);
    if (r == CUDA_SUCCESS) { r = grant_access(address, bytes); }
    if (r != CUDA_SUCCESS) {
      RMM_LOG_ERROR(
        "expandable pool region: {} of device memory at {:#x} could not be mapped again after a failed "
        "pause: {}",
        rmm::format_bytes_exact(bytes), address, describe("cuMemMap", r));
    }
  }
}

void expandable_region::undo_restore(std::vector<std::uint32_t> const& created, std::size_t mapped) noexcept
{
  for (std::size_t i = 0; i < created.size(); ++i) {
    auto& p = physicals_[created[i]];
    if (i < mapped) { (void)cu().cuMemUnmap(static_cast<CUdeviceptr>(address_of(p.first)), p.granules * granularity_); }
    (void)cu().cuMemRelease(p.handle);
    p.handle = {};
  }
}

void expandable_region::restore(bool keep_host_memory)
{
  if (!suspended()) { throw rmm::logic_error{"the region is not suspended"}; }
  rmm::detail::device_context_scope const context{device_};
  std::vector<std::uint32_t> created;
  std::size_t needed = 0;
  for (std::uint32_t index = 0; index < physicals_.size(); ++index) {
    if (physicals_[index].granules > 0) { needed += physicals_[index].granules * granularity_; }
  }
  created.reserve(physicals_.size());
  for (std::uint32_t index = 0; index < physicals_.size(); ++index) {
    auto& p = physicals_[index];
    if (p.granules == 0) { continue; }
    auto const prop = allocation_properties();
    if (auto const r = cu().cuMemCreate(&p.handle, p.granules * granularity_, &prop, 0); r != CUDA_SUCCESS) {
      p.handle = {};
      undo_restore(created, 0);
      std::size_t free_bytes = 0;
      std::size_t total      = 0;
      auto const info        = cu().cuMemGetInfo_v2(&free_bytes, &total);
      auto message =
        info == CUDA_SUCCESS
          ? fmt::format("device {} has {} free for the {} it held before the pause: {} missing ({})", device_,
                        rmm::format_bytes(free_bytes), rmm::format_bytes(needed),
                        rmm::format_bytes(needed > free_bytes ? needed - free_bytes : 0), describe("cuMemCreate", r))
          : fmt::format(
              "device {} could not give back the {} it held before the pause ({}; "
              "its free memory is unknown: {})",
              device_, rmm::format_bytes(needed), describe("cuMemCreate", r), describe("cuMemGetInfo", info));
      if (r == CUDA_ERROR_OUT_OF_MEMORY) { throw rmm::out_of_memory{message}; }
      throw rmm::bad_alloc{message};
    }
    created.push_back(index);
  }
  for (std::size_t i = 0; i < created.size(); ++i) {
    auto const& p      = physicals_[created[i]];
    auto const address = address_of(p.first);
    auto const bytes   = p.granules * granularity_;
    auto r             = cu().cuMemMap(static_cast<CUdeviceptr>(address), bytes, 0, p.handle, 0);
    if (r == CUDA_SUCCESS) {
      r = grant_access(address, bytes);
      if (r != CUDA_SUCCESS) { (void)cu().cuMemUnmap(static_cast<CUdeviceptr>(address), bytes); }
    }
    if (r != CUDA_SUCCESS) {
      undo_restore(created, i);
      throw rmm::bad_alloc{fmt::format("could not map {} at {:#x} again: {}", rmm::format_bytes_exact(bytes), address,
                                       describe("cuMemMap", r))};
    }
  }
  try {
    (void)copy_contents(*suspended_, copy_direction::to_device);
  } catch (...) {
    undo_restore(created, created.size());
    throw;
  }
  keep_host_copy(std::move(suspended_->host), keep_host_memory);
  suspended_.reset();
}

void expandable_region::keep_host_copy(std::unique_ptr<host_copy> copy, bool held) noexcept
{
  // Given back lazily, the pages stay until the system runs short: the next suspend() usually
  // finds them there and copies as fast as into held memory, while nothing is held for good.
  if (copy != nullptr && (held || copy->give_back_lazily())) {
    kept_host_      = std::move(copy);
    kept_host_held_ = held;
  }
}

std::size_t expandable_region::kept_host_bytes() const noexcept
{
  return kept_host_ != nullptr ? kept_host_->size() : 0;
}

std::size_t expandable_region::staging_host_bytes() const noexcept
{
  return copier_ != nullptr ? copier_->staging_bytes() : 0;
}

std::size_t expandable_region::release_kept_host_memory() noexcept
{
  auto const bytes = kept_host_bytes() + staging_host_bytes();
  kept_host_.reset();
  if (copier_ != nullptr) {
    rmm::detail::device_context_scope const context{device_};  // its stream and events are the device's
    copier_.reset();
  }
  return bytes;
}

}  // namespace rmm::mr::detail
