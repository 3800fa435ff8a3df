// SPDX-License-Identifier: Apache-2.0
#pragma once

// A reserved range of device virtual addresses backed by physical memory mapped at its end on
// demand (CUDA virtual memory management). Memory added by grow() is contiguous with what came
// before, so a pool built on it can coalesce free memory across growth steps, and a request can
// be met by extending the free block at the end instead of reserving a whole new chunk.
//
// With movable granules, growth of up to movable_limit bytes gives each granule a physical
// allocation of its own (the driver maps an allocation whole, from its start), so free granules in
// the middle can be moved: recycle() unmaps them where they are and maps them again at the end.
// The addresses left behind are holes, which growth fills once the address range is used up to its
// end. Fragmentation then costs addresses, of which there are plenty, not device memory. Larger
// growth (a large initial pool), and all growth without movable granules, is one allocation,
// mapped once, that stays where it is.

#include "coalescing_free_list.hpp"  // memory_range

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rmm::mr::detail {

class staged_copier;
class host_copy;
enum class copy_direction { to_host, to_device };

class expandable_region {
 public:
  /// A region of up to `capacity` mapped bytes on `device`, or nullptr when the device or driver
  /// cannot do virtual memory management. With `exact_capacity` (a pool's maximum size, which must
  /// hold) the region maps the whole granules within `capacity` (nullptr when not even one). With
  /// `movable_granules`, small growth is mapped granule by granule, so that recycle() can move
  /// granules. Several times the capacity is reserved in addresses, for moved granules and for
  /// the holes release() leaves.
  [[nodiscard]] static std::unique_ptr<expandable_region> create(int device,
                                                                 std::size_t capacity,
                                                                 bool exact_capacity,
                                                                 bool movable_granules);

  /// `addresses` bytes reserved at `base` (at least `capacity`; the rest leaves room to recycle).
  expandable_region(int device,
                    std::uintptr_t base,
                    std::size_t addresses,
                    std::size_t capacity,
                    std::size_t granularity,
                    bool movable_granules);
  /// Synchronizes the device (unmapping does not wait for queued work, as cudaFree does), then
  /// unmaps and releases everything and frees the addresses.
  ~expandable_region();
  expandable_region(expandable_region const&)            = delete;
  expandable_region& operator=(expandable_region const&) = delete;

  /// The end of the highest mapped granule.
  [[nodiscard]] std::uintptr_t end() const noexcept { return base_ + slots_.size() * granularity_; }
  [[nodiscard]] std::size_t mapped_bytes() const noexcept { return mapped_granules_ * granularity_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  /// Whether the mapped memory can be exported to another process (a POSIX file descriptor).
  [[nodiscard]] bool shareable() const noexcept { return shareable_; }
  /// Bytes recycle() may still move to the end.
  [[nodiscard]] std::size_t recyclable_bytes() const noexcept { return addresses_ - (end() - base_); }

  /// Maps `bytes` (rounded up to the granularity) of new device memory and returns it: at the
  /// end, or, when the address range is used up to its end, in the lowest hole large enough.
  /// Throws rmm::out_of_memory when the device has no memory left or the region is full.
  memory_range grow(std::size_t bytes);

  /// Growth up to this size maps one allocation per granule (movable); larger growth one in all.
  static constexpr std::size_t movable_limit = std::size_t{64} << 20;

  /// Whether the granule at `address` can be moved by recycle().
  [[nodiscard]] bool movable(std::uintptr_t address) const noexcept;

  /// What recycle() did.
  struct recycled {
    memory_range moved{};                ///< where the moved granules are now (size 0: none)
    std::vector<std::uintptr_t> stayed;  ///< granules left where they were, still mapped
    std::vector<std::uintptr_t> lost;    ///< granules whose memory went back to the device
  };
  /// Moves the movable granules starting at `granules` (sorted) to the end, in that order. They
  /// must be unused, with no queued work touching them, and at most recyclable_bytes() in all.
  /// Should the driver refuse a mapping, the rest stay where they are; a granule that can be put
  /// back neither at the end nor where it was is given back to the device (reported).
  recycled recycle(std::vector<std::uintptr_t> const& granules);

  /// The physical allocations that lie wholly within `range`, as address ranges in order.
  [[nodiscard]] std::vector<memory_range> allocations_within(memory_range range) const;
  /// Unmaps the allocations at `ranges` (from allocations_within) and gives their memory back to
  /// the device, leaving holes in the addresses; the memory must be unused and no queued work may
  /// touch it any more. Returns the bytes given back.
  std::size_t release(std::vector<memory_range> const& ranges) noexcept;

  /// Unmaps the mapped allocations that lie wholly within [from, end()); the memory must be unused
  /// and no queued work may touch it any more. Returns the new end.
  std::uintptr_t shrink_to(std::uintptr_t from) noexcept;

  /// What suspend() gave back and kept.
  struct suspension {
    std::size_t device_bytes{0};  ///< device memory given back
    std::size_t saved_bytes{0};   ///< contents kept in host memory
    bool staged{true};            ///< copied through page-locked staging (else by the driver: slower)
  };
  /// Gives all the region's device memory back while keeping its addresses: copies every mapped
  /// byte outside `unused` (sorted, disjoint: the pool's free memory) to host memory unless
  /// `discard`, then unmaps and releases every allocation, remembering where each was. No queued
  /// work may touch the region, and nothing may use it until restore(). Nothing changes when it
  /// throws: rmm::out_of_memory when there is no host memory for the contents (pageable memory
  /// only up to what the host has available), rmm::cuda_error when a copy or an unmapping fails.
  suspension suspend(std::vector<memory_range> const& unused, bool discard);
  /// Maps new device memory where every allocation was and copies the kept contents back. All or
  /// nothing: when the device cannot give all of it, what was created goes back, the contents stay
  /// in host memory, and rmm::out_of_memory says how much was missing; a later call may succeed.
  /// The host memory that held the contents stays the region's, for the next suspend() to copy
  /// into without first touching new pages (the slow part of a suspend): held with
  /// `keep_host_memory`, else given back lazily (the system takes the pages when it runs short).
  void restore(bool keep_host_memory);
  /// Host memory a restore() kept for the next suspend(), held or given back lazily, in bytes.
  [[nodiscard]] std::size_t kept_host_bytes() const noexcept;
  /// Page-locked host memory the copies are staged through, made at the first suspend() and held
  /// for the next ones, in bytes.
  [[nodiscard]] std::size_t staging_host_bytes() const noexcept;
  /// Gives the host memory a restore() kept and the staging buffers back to the system; returns
  /// their bytes. The next suspend() makes new ones.
  std::size_t release_kept_host_memory() noexcept;
  [[nodiscard]] bool suspended() const noexcept { return suspended_ != nullptr; }

 private:
  static constexpr std::uint32_t hole = ~std::uint32_t{0};
  /// One physical allocation, mapped whole at slots [first, first + granules).
  struct physical {
    CUmemGenericAllocationHandle handle{};
    std::size_t first{0};
    std::size_t granules{0};  // 0: released, the entry is free for reuse
  };

  /// Creates an allocation of `granules` granules and maps it at slot `first` (no access set yet);
  /// sets its index, or returns the driver's error (and names the call) with nothing left behind.
  [[nodiscard]] CUresult map_new(std::size_t first,
                                 std::size_t granules,
                                 std::uint32_t& index,
                                 char const*& failed_call) noexcept;
  /// Maps allocation `index` at slot `first` (no access set yet).
  [[nodiscard]] CUresult map_at(std::uint32_t index, std::size_t first) noexcept;
  /// Unmaps allocation `index` from its slots; with `release`, gives its memory back too.
  void unmap(std::uint32_t index, bool release) noexcept;
  /// Maps the first `unmapped` of `live` again where they were (a suspend the driver refused).
  void remap_after_failed_suspend(std::vector<std::uint32_t> const& live, std::size_t unmapped) noexcept;
  /// The mapped allocations, in address order.
  [[nodiscard]] std::vector<std::uint32_t> live_allocations() const;
  /// Gives allocation `index` (mapped nowhere) back to the device.
  void give_back(std::uint32_t index) noexcept;
  /// Makes [address, address + bytes) readable and writable by the device.
  [[nodiscard]] CUresult grant_access(std::uintptr_t address, std::size_t bytes) const noexcept;
  /// The lowest run of `count` holes, as a slot index, or slots_.size() when there is none.
  [[nodiscard]] std::size_t find_holes(std::size_t count) const noexcept;
  [[nodiscard]] std::uintptr_t address_of(std::size_t slot) const noexcept { return base_ + slot * granularity_; }
  [[nodiscard]] std::size_t slot_of(std::uintptr_t address) const noexcept { return (address - base_) / granularity_; }
  void trim_holes() noexcept;

  /// What every physical allocation of the region is made with.
  [[nodiscard]] CUmemAllocationProp allocation_properties() const noexcept;
  /// Gives back what a restore() that could not finish created, unmapping the first `mapped`.
  void undo_restore(std::vector<std::uint32_t> const& created, std::size_t mapped) noexcept;
  /// Keeps `copy` for the next suspend(): held, or given back lazily (dropped where the kernel
  /// cannot do that).
  void keep_host_copy(std::unique_ptr<host_copy> copy, bool held) noexcept;

  /// The contents a suspended region keeps: each saved range at its offset in `host`.
  struct saved_contents;
  /// Notes in `saved` the bytes of each of `live` outside the free ranges `unused`.
  void note_contents(std::vector<std::uint32_t> const& live,
                     std::vector<memory_range> const& unused,
                     saved_contents& saved) const;
  /// Host memory for `saved`'s contents: that a restore() kept when it is large enough, else new.
  void take_host_memory(saved_contents& saved);
  /// Unmaps each of `live`; when the driver refuses one, maps those before it again, gives the
  /// host memory back to the region, and throws.
  void unmap_for_suspend(std::vector<std::uint32_t> const& live, saved_contents& saved);
  /// Copies the kept contents to the host or back: through page-locked staging when it can be had
  /// (true), else with the driver's own copies (false).
  bool copy_contents(saved_contents const& saved, copy_direction direction);

  int device_;
  std::uintptr_t base_;
  std::size_t addresses_;
  std::size_t capacity_;
  std::size_t granularity_;
  bool movable_granules_;
  bool shareable_{false};
  std::size_t mapped_granules_{0};
  std::vector<std::uint32_t> slots_;  // per granule of [base_, end()): its allocation, or hole
  std::vector<physical> physicals_;
  std::vector<std::uint32_t> spare_;           // released entries of physicals_
  std::unique_ptr<saved_contents> suspended_;  // set between suspend() and restore()
  std::unique_ptr<host_copy> kept_host_;       // host memory restore() kept for the next suspend()
  bool kept_host_held_{false};                 // else given back lazily
  std::unique_ptr<staged_copier> copier_;      // made at the first suspend(), kept for the next ones
};

}  // namespace rmm::mr::detail
