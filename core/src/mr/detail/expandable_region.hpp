#pragma once

// A reserved range of device virtual addresses backed by physical memory mapped at its end on
// demand (CUDA virtual memory management). Memory added by grow() is contiguous with what came
// before, so a pool built on it can coalesce free memory across growth steps, and a request can
// be met by extending the free block at the end instead of reserving a whole new chunk.

#include "coalescing_free_list.hpp"  // memory_range

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rmm::mr::detail {

class expandable_region {
 public:
  /// A region of up to `capacity` bytes on `device`, or nullptr when the device or driver cannot
  /// do virtual memory management. With `exact_capacity` (a pool's maximum size, which must hold)
  /// the region holds the whole mapping granules within `capacity` (nullptr when not even one).
  [[nodiscard]] static std::unique_ptr<expandable_region> create(int device, std::size_t capacity, bool exact_capacity);

  expandable_region(int device, std::uintptr_t base, std::size_t capacity, std::size_t granularity);
  /// Synchronizes the device (unmapping does not wait for queued work, as cudaFree does), then
  /// unmaps and releases everything and frees the addresses.
  ~expandable_region();
  expandable_region(expandable_region const&)            = delete;
  expandable_region& operator=(expandable_region const&) = delete;

  [[nodiscard]] std::uintptr_t end() const noexcept { return base_ + mapped_; }
  [[nodiscard]] std::size_t mapped_bytes() const noexcept { return mapped_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  [[nodiscard]] std::size_t segment_count() const noexcept { return segments_.size(); }
  [[nodiscard]] bool contains(std::uintptr_t address) const noexcept
  {
    return address >= base_ && address < base_ + capacity_;
  }

  /// Maps `bytes` (a multiple of the granularity) at the end and returns them. Throws
  /// rmm::out_of_memory when the device has no memory left or the region is full.
  memory_range grow(std::size_t bytes);

  /// Unmaps whole segments from the end while they lie within [from, end()); the memory must be
  /// unused and no queued work may touch it any more. Returns the new end.
  std::uintptr_t shrink_to(std::uintptr_t from) noexcept;

 private:
  struct segment {
    std::size_t offset;
    std::size_t size;
    CUmemGenericAllocationHandle handle;
  };

  int device_;
  std::uintptr_t base_;
  std::size_t capacity_;
  std::size_t granularity_;
  std::size_t mapped_{0};
  std::vector<segment> segments_;
};

}  // namespace rmm::mr::detail
