#pragma once

// A reserved range of device virtual addresses backed by physical memory mapped at its end on
// demand (CUDA virtual memory management). Memory added by grow() is contiguous with what came
// before, so a pool built on it can coalesce free memory across growth steps, and a request can
// be met by extending the free block at the end instead of reserving a whole new chunk.
//
// Every granule is mapped on its own, so free granules in the middle can be moved: recycle()
// maps their physical memory again at the end and unmaps them where they were. The addresses
// left behind are holes, which later growth fills before the end moves on once the address range
// runs out. Fragmentation then costs addresses, of which there are plenty, not device memory.

#include "coalescing_free_list.hpp"  // memory_range

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rmm::mr::detail {

class expandable_region {
 public:
  /// A region of up to `capacity` mapped bytes on `device`, or nullptr when the device or driver
  /// cannot do virtual memory management. With `exact_capacity` (a pool's maximum size, which must
  /// hold) the region maps the whole granules within `capacity` (nullptr when not even one).
  [[nodiscard]] static std::unique_ptr<expandable_region> create(int device, std::size_t capacity, bool exact_capacity);

  /// `addresses` bytes reserved at `base` (at least `capacity`; the rest leaves room to recycle).
  expandable_region(int device,
                    std::uintptr_t base,
                    std::size_t addresses,
                    std::size_t capacity,
                    std::size_t granularity);
  /// Synchronizes the device (unmapping does not wait for queued work, as cudaFree does), then
  /// unmaps and releases everything and frees the addresses.
  ~expandable_region();
  expandable_region(expandable_region const&)            = delete;
  expandable_region& operator=(expandable_region const&) = delete;

  [[nodiscard]] std::uintptr_t base() const noexcept { return base_; }
  /// The end of the highest mapped granule.
  [[nodiscard]] std::uintptr_t end() const noexcept { return base_ + slots_.size() * granularity_; }
  [[nodiscard]] std::size_t mapped_bytes() const noexcept { return mapped_granules_ * granularity_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  /// Bytes recycle() may still move to the end.
  [[nodiscard]] std::size_t recyclable_bytes() const noexcept { return addresses_ - (end() - base_); }
  [[nodiscard]] bool contains(std::uintptr_t address) const noexcept
  {
    return address >= base_ && address < base_ + addresses_;
  }

  /// Maps `bytes` (rounded up to the granularity) of new device memory and returns it: at the
  /// end, or, when the address range is used up to its end, in the lowest hole large enough.
  /// Throws rmm::out_of_memory when the device has no memory left or the region is full.
  memory_range grow(std::size_t bytes);

  /// Moves the physical memory of the mapped granules starting at `granules` to the end and
  /// returns the range it now occupies. The granules must be unused, with no queued work touching
  /// them, and at most recyclable_bytes() in all. Throws rmm::bad_alloc, changing nothing, when
  /// the driver refuses a mapping.
  memory_range recycle(std::vector<std::uintptr_t> const& granules);

  /// Unmaps the mapped granules that lie wholly within [from, end()); the memory must be unused and
  /// no queued work may touch it any more. Returns the new end.
  std::uintptr_t shrink_to(std::uintptr_t from) noexcept;

 private:
  /// What backs one granule of addresses.
  struct slot {
    static constexpr std::uint32_t hole = ~std::uint32_t{0};
    std::uint32_t physical{hole};  // index into physicals_, or hole
    std::uint32_t offset{0};       // granules into that allocation
  };
  struct physical {
    CUmemGenericAllocationHandle handle{};
    std::size_t mapped{0};  // granules of it mapped somewhere; released at 0
  };

  /// Maps granule `offset` of physicals_[index] at `address` (no access set yet).
  [[nodiscard]] CUresult map_granule(std::uintptr_t address, std::uint32_t index, std::uint32_t offset) noexcept;
  /// Unmaps the granule at slot `i` and releases its allocation when nothing else maps it.
  void unmap_slot(std::size_t i) noexcept;
  /// Makes [address, address + bytes) readable and writable by the device.
  [[nodiscard]] CUresult grant_access(std::uintptr_t address, std::size_t bytes) const noexcept;
  /// The lowest run of `count` holes, as a slot index, or slots_.size() when there is none.
  [[nodiscard]] std::size_t find_holes(std::size_t count) const noexcept;

  int device_;
  std::uintptr_t base_;
  std::size_t addresses_;
  std::size_t capacity_;
  std::size_t granularity_;
  std::size_t mapped_granules_{0};
  std::vector<slot> slots_;  // one per granule of [base_, end())
  std::vector<physical> physicals_;
};

}  // namespace rmm::mr::detail
