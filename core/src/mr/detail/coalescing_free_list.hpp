// SPDX-License-Identifier: Apache-2.0
#pragma once

// The free memory of one owner (a stream's arena, or the pool's clean reserve): free ranges
// indexed by size class for the search and by both ends for coalescing, all in O(1).
//
// Ranges from different upstream chunks are never merged even when their addresses touch: a
// block must lie within one upstream allocation, and whole chunks must be recoverable to give
// them back. `chunk_starts` (sorted) tells where chunks begin.
//
// The latest few frees of the common path (insert_recent) wait unmerged beside the index: most
// programs ask again for the sizes they just freed, and take_recent() then finds an exact match by
// a short scan, with no split on allocation and no merge on free. Every other operation merges
// them first (spill), so blocks are cut, chosen and reported exactly as if they had been merged at
// once: the recent frees change which exact fit is reused, never how memory coalesces.

#include "address_map.hpp"
#include "free_store.hpp"
#include "memory_range.hpp"
#include "size_class_index.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace rmm::mr::detail {

class coalescing_free_list {
 public:
  coalescing_free_list()                                       = default;
  coalescing_free_list(coalescing_free_list const&)            = delete;
  coalescing_free_list& operator=(coalescing_free_list const&) = delete;
  coalescing_free_list(coalescing_free_list&&)                 = default;  // nodes live in slabs: stable
  coalescing_free_list& operator=(coalescing_free_list&&)      = default;
  ~coalescing_free_list()                                      = default;

  /// Free ranges that touch merge into one block (free_store.hpp: coalescing_free_store).
  static constexpr bool coalesces = true;

  /// Adds [start, start + size), freed at `free_seq`, merging with free neighbours in the same
  /// chunk (a merged block counts as freed at the latest of its parts). Refuses, and returns
  /// false, a range that begins or ends where a free block does: it is free already (a double
  /// free), and adding it would hand the same memory out twice. Both are lookups the merge does
  /// anyway, so the check costs nothing extra on the common path.
  [[nodiscard]] bool insert(memory_range range, chunk_starts const& chunks, std::uint64_t free_seq = 0)
  {
    if (is_free_already(range)) { return false; }
    merge_in(range, chunks, free_seq);
    return true;
  }

  /// As insert(), set aside unmerged among the latest frees (the oldest of them is merged when
  /// there is no room): for frees whose size is likely to be asked for again soon. The same checks
  /// refuse a range that is free already.
  [[nodiscard]] bool insert_recent(memory_range range, chunk_starts const& chunks, std::uint64_t free_seq)
  {
    if (is_free_already(range)) { return false; }
    if (recent_score_ <= min_recent_score && (++recent_probe_ & (recent_probe_interval - 1)) != 0) {
      merge_in(range, chunks, free_seq);  // sizes do not repeat lately: merge at once, as insert() does
      return true;
    }
    if (recent_count_ == recent_capacity) {
      // Merged before it leaves the list: if that runs out of host memory, nothing is lost.
      merge_in({recent_[0].start, recent_[0].size}, chunks, recent_[0].free_seq);  // checked when it came in
      (void)remove_recent(0);
    }
    recent_[recent_count_++] = {range.start, range.size, free_seq};
    recent_bytes_ += range.size;
    return true;
  }

  /// Merges every range insert_recent() set aside into the index. Out of host memory, it throws
  /// std::bad_alloc with the ranges not yet merged still set aside.
  void spill(chunk_starts const& chunks)
  {
    while (recent_count_ > 0) {
      merge_in({recent_[0].start, recent_[0].size}, chunks, recent_[0].free_seq);
      (void)remove_recent(0);
    }
  }

  /// Removes and returns the latest recent free of exactly `bytes`, or nothing.
  [[nodiscard]] std::optional<memory_range> take_recent(std::size_t bytes) noexcept
  {
    for (auto i = recent_count_; i-- > 0;) {
      if (recent_[i].size == bytes) {
        recent_score_ = std::min(recent_score_ + recent_hit_score, max_recent_score);
        auto const r  = remove_recent(i);
        return memory_range{r.start, r.size};
      }
    }
    return std::nullopt;
  }

  /// Removes and returns a range of exactly `bytes` (a multiple of 256) cut from the front of a
  /// good-fit free block, or nothing.
  [[nodiscard]] std::optional<memory_range> take(std::size_t bytes, chunk_starts const& chunks)
  {
    if (recent_count_ > 0) {  // a miss of the recent frees
      recent_score_ = std::max(recent_score_ - 1, min_recent_score);
      spill(chunks);
    }
    free_block* block = index_.find(bytes);
    if (block == nullptr) { return std::nullopt; }
    return cut(block, bytes);
  }

  /// Removes and returns a whole good-fit free block of at least `bytes`, or nothing.
  [[nodiscard]] std::optional<memory_range> take_whole(std::size_t bytes, chunk_starts const& chunks)
  {
    spill(chunks);
    free_block* block = index_.find(bytes);
    if (block == nullptr) { return std::nullopt; }
    memory_range const taken{block->start, block->size};
    unlink(block);
    return taken;
  }

  /// As take(), from blocks freed at or before `max_seq` only.
  [[nodiscard]] std::optional<memory_range> take_freed_before(std::size_t bytes,
                                                              std::uint64_t max_seq,
                                                              chunk_starts const& chunks)
  {
    spill(chunks);
    free_block* block = index_.find_freed_before(bytes, max_seq);
    if (block == nullptr) { return std::nullopt; }
    return cut(block, bytes);
  }

  /// Removes every free range, handing each to `sink(memory_range)`.
  template <class Sink>
  void drain(Sink&& sink)
  {
    drain_recent(std::numeric_limits<std::uint64_t>::max(), sink);
    std::vector<free_block*> blocks;
    blocks.reserve(by_start_.size());
    index_.for_each([&](free_block* b) { blocks.push_back(b); });
    for (auto* b : blocks) {
      memory_range const range{b->start, b->size};
      unlink(b);
      sink(range);
    }
  }

  /// Removes every free range freed at or before `max_seq`, handing each to `sink(memory_range)`.
  template <class Sink>
  void drain_freed_before(std::uint64_t max_seq, Sink&& sink)
  {
    drain_recent(max_seq, sink);
    std::vector<free_block*> blocks;
    index_.for_each([&](free_block* b) {
      if (b->free_seq <= max_seq) { blocks.push_back(b); }
    });
    for (auto* b : blocks) {
      memory_range const range{b->start, b->size};
      unlink(b);
      sink(range);
    }
  }

  /// Takes the whole granules (`granularity`-aligned) that `movable(start)` accepts out of free
  /// blocks freed at or before `max_seq`, longest runs first, handing each granule's start to
  /// `sink(start)` until `max_bytes` are taken; the rest of each block stays free. The block that
  /// ends at `keep_end` is left alone. Returns the bytes taken.
  template <class Movable, class Sink>
  std::size_t take_whole_granules(std::size_t granularity,
                                  std::size_t max_bytes,
                                  std::uintptr_t keep_end,
                                  std::uint64_t max_seq,
                                  chunk_starts const& chunks,
                                  Movable&& movable,
                                  Sink&& sink)
  {
    spill(chunks);
    auto runs = granule_runs(granularity, keep_end, max_seq, movable);
    std::stable_sort(runs.begin(), runs.end(),
                     [](granule_run const& a, granule_run const& b) { return a.last - a.first > b.last - b.first; });
    // The runs taken, per block: a block is unlinked once and what lies between its runs put back.
    std::vector<granule_run> taken_runs;
    std::size_t taken = 0;
    for (auto const& run : runs) {
      if (max_bytes - taken < granularity) { break; }
      auto const last = std::min(run.last, run.first + (max_bytes - taken) / granularity * granularity);
      taken_runs.push_back({run.block, run.first, last});
      taken += last - run.first;
    }
    std::sort(taken_runs.begin(), taken_runs.end(), [](granule_run const& a, granule_run const& b) {
      return a.block != b.block ? a.block < b.block : a.first < b.first;
    });
    for (std::size_t i = 0; i < taken_runs.size();) {
      auto* const block = taken_runs[i].block;
      memory_range const whole{block->start, block->size};
      auto const free_seq = block->free_seq;
      unlink(block);
      // The pieces around the runs: nothing next to them is free, so they merge with nothing.
      auto cursor = whole.start;
      for (; i < taken_runs.size() && taken_runs[i].block == block; ++i) {
        auto const& run = taken_runs[i];
        if (run.first > cursor) { (void)insert({cursor, run.first - cursor}, chunks, free_seq); }
        for (auto g = run.first; g < run.last; g += granularity) { sink(g); }
        cursor = run.last;
      }
      if (whole.start + whole.size > cursor) {
        (void)insert({cursor, whole.start + whole.size - cursor}, chunks, free_seq);
      }
    }
    return taken;
  }

  /// The bytes take_whole_granules() could take with the same arguments.
  template <class Movable>
  [[nodiscard]] std::size_t whole_granule_bytes(std::size_t granularity,
                                                std::uintptr_t keep_end,
                                                std::uint64_t max_seq,
                                                chunk_starts const& chunks,
                                                Movable&& movable)
  {
    spill(chunks);
    std::size_t bytes = 0;
    for (auto const& run : granule_runs(granularity, keep_end, max_seq, movable)) { bytes += run.last - run.first; }
    return bytes;
  }

  /// Size of the free block that ends at `end`, or 0.
  [[nodiscard]] std::size_t size_of_block_ending_at(std::uintptr_t end, chunk_starts const& chunks)
  {
    spill(chunks);
    auto const* block = by_end_.find(end);
    return block == nullptr ? 0 : block->size;
  }

  /// Removes and returns the free block that ends at `end`, if there is one.
  std::optional<memory_range> remove_block_ending_at(std::uintptr_t end, chunk_starts const& chunks)
  {
    spill(chunks);
    free_block* block = by_end_.find(end);
    if (block == nullptr) { return std::nullopt; }
    memory_range const range{block->start, block->size};
    unlink(block);
    return range;
  }

  /// Removes the free range that is exactly [start, start + size), if there is one.
  bool remove_exact(memory_range range, chunk_starts const& chunks)
  {
    spill(chunks);
    free_block* block = by_start_.find(range.start);
    if (block == nullptr || block->size != range.size) { return false; }
    unlink(block);
    return true;
  }

  [[nodiscard]] std::size_t free_bytes() const noexcept { return free_bytes_ + recent_bytes_; }
  [[nodiscard]] std::size_t block_count() const noexcept { return by_start_.size() + recent_count_; }
  [[nodiscard]] std::size_t largest_block() const noexcept
  {
    auto const* b       = index_.largest();
    std::size_t largest = b == nullptr ? 0 : b->size;
    for (std::size_t i = 0; i < recent_count_; ++i) { largest = std::max(largest, recent_[i].size); }
    return largest;
  }

  template <class F>
  void for_each(F&& f) const
  {
    index_.for_each([&](free_block const* b) { f(memory_range{b->start, b->size}); });
    for (std::size_t i = 0; i < recent_count_; ++i) { f(memory_range{recent_[i].start, recent_[i].size}); }
  }

  /// How many frees insert_recent() keeps unmerged: enough for the sizes a loop step frees and asks
  /// for again, few enough that a miss scans them in a few cycles.
  static constexpr std::size_t recent_capacity = 8;
  /// Where sizes do not repeat (random sizes), setting frees aside only adds a scan and a deferred
  /// merge to each operation: a score goes up by recent_hit_score at each exact reuse and down by
  /// one at each miss, and at its minimum insert_recent() merges at once, except one free in
  /// recent_probe_interval that keeps testing whether sizes repeat again.
  static constexpr int recent_hit_score           = 4;
  static constexpr int max_recent_score           = 16;
  static constexpr int min_recent_score           = -16;
  static constexpr unsigned recent_probe_interval = 64;

 private:
  struct recent_free {
    std::uintptr_t start;
    std::size_t size;
    std::uint64_t free_seq;
  };

  /// Whether a free block (merged or recent) begins or ends where `range` does.
  [[nodiscard]] bool is_free_already(memory_range range) const noexcept
  {
    return by_start_.find(range.start) != nullptr || by_end_.find(range.start + range.size) != nullptr ||
           recent_shares_an_end(range);
  }

  [[nodiscard]] bool recent_shares_an_end(memory_range range) const noexcept
  {
    for (std::size_t i = 0; i < recent_count_; ++i) {
      if (recent_[i].start == range.start || recent_[i].start + recent_[i].size == range.start + range.size) {
        return true;
      }
    }
    return false;
  }

  /// Removes the i-th recent free, keeping the others in the order they came.
  recent_free remove_recent(std::size_t i) noexcept
  {
    auto const r = recent_[i];
    std::copy(recent_.begin() + static_cast<std::ptrdiff_t>(i) + 1,
              recent_.begin() + static_cast<std::ptrdiff_t>(recent_count_),
              recent_.begin() + static_cast<std::ptrdiff_t>(i));
    --recent_count_;
    recent_bytes_ -= r.size;
    return r;
  }

  template <class Sink>
  void drain_recent(std::uint64_t max_seq, Sink& sink)
  {
    for (std::size_t i = 0; i < recent_count_;) {
      if (recent_[i].free_seq > max_seq) {
        ++i;
        continue;
      }
      auto const r = remove_recent(i);
      sink(memory_range{r.start, r.size});
    }
  }

  /// A run of movable whole granules of a free block: [first, last).
  struct granule_run {
    free_block* block;
    std::uintptr_t first;
    std::uintptr_t last;
  };
  template <class Movable>
  [[nodiscard]] std::vector<granule_run> granule_runs(std::size_t granularity,
                                                      std::uintptr_t keep_end,
                                                      std::uint64_t max_seq,
                                                      Movable&& movable) const
  {
    std::vector<granule_run> runs;
    index_.for_each([&](free_block* b) {
      if (b->end() == keep_end || b->free_seq > max_seq) { return; }
      auto const last = b->end() / granularity * granularity;
      for (auto g = (b->start + granularity - 1) / granularity * granularity; g < last; g += granularity) {
        if (!movable(g)) { continue; }
        if (!runs.empty() && runs.back().block == b && runs.back().last == g) {
          runs.back().last += granularity;
        } else {
          runs.push_back({b, g, g + granularity});
        }
      }
    });
    return runs;
  }

  /// Adds a range known not to be free, merging it with its free neighbours in the same chunk.
  /// Throws std::bad_alloc (a new node) with nothing changed.
  void merge_in(memory_range range, chunk_starts const& chunks, std::uint64_t free_seq)
  {
    auto const end     = range.start + range.size;
    free_block* before = is_chunk_start(range.start, chunks) ? nullptr : by_end_.find(range.start);
    free_block* after  = is_chunk_start(end, chunks) ? nullptr : by_start_.find(end);
    if (before == nullptr && after == nullptr) {
      link(range.start, range.size, free_seq);
      return;
    }
    // A merge grows a neighbour's node in place: only the map entries of the ends that move change.
    auto size = range.size;
    if (after != nullptr) { free_seq = std::max(free_seq, after->free_seq); }
    if (before == nullptr) {
      reshape(after, range.start, size + after->size, free_seq);
      return;
    }
    if (after != nullptr) {
      size += after->size;
      unlink(after);
    }
    reshape(before, before->start, before->size + size, std::max(free_seq, before->free_seq));
  }

  [[nodiscard]] static bool is_chunk_start(std::uintptr_t address, chunk_starts const& chunks) noexcept
  {
    return std::binary_search(chunks.begin(), chunks.end(), address);
  }

  memory_range cut(free_block* block, std::size_t bytes)
  {
    memory_range const taken{block->start, bytes};
    if (block->size == bytes) {
      unlink(block);
      return taken;
    }
    // Keep the tail: same end, so only the start key changes, and the size class only sometimes.
    by_start_.erase(block->start);
    block->start += bytes;
    index_.resize(block, block->size - bytes);
    by_start_.insert(block->start, block);
    free_bytes_ -= bytes;
    return taken;
  }

  /// Gives a free block new bounds (a merge), as the newest block of its size class.
  void reshape(free_block* block, std::uintptr_t start, std::size_t size, std::uint64_t free_seq)
  {
    index_.remove(block);
    if (start != block->start) {
      by_start_.erase(block->start);
      by_start_.insert(start, block);
    }
    if (start + size != block->end()) {
      by_end_.erase(block->end());
      by_end_.insert(start + size, block);
    }
    free_bytes_ += size - block->size;  // merges only grow
    block->start    = start;
    block->size     = size;
    block->free_seq = free_seq;
    index_.insert(block);
  }

  /// Throws std::bad_alloc with nothing changed: every allocation comes before the first change.
  void link(std::uintptr_t start, std::size_t size, std::uint64_t free_seq)
  {
    by_start_.reserve_one_more();
    by_end_.reserve_one_more();
    free_block* block = allocate_node();
    block->start      = start;
    block->size       = size;
    block->free_seq   = free_seq;
    index_.insert(block);
    by_start_.insert(start, block);
    by_end_.insert(start + size, block);
    free_bytes_ += size;
  }

  void unlink(free_block* block) noexcept
  {
    index_.remove(block);
    by_start_.erase(block->start);
    by_end_.erase(block->end());
    free_bytes_ -= block->size;
    release_node(block);
  }

  // Nodes come from slabs and are recycled through a free list: no heap call per operation.
  free_block* allocate_node()
  {
    if (spare_nodes_ == nullptr) {
      constexpr std::size_t slab_size = 256;
      slabs_.push_back(std::make_unique<free_block[]>(slab_size));
      for (std::size_t i = 0; i < slab_size; ++i) { release_node(&slabs_.back()[i]); }
    }
    free_block* node = spare_nodes_;
    spare_nodes_     = node->next;
    return node;
  }
  void release_node(free_block* node) noexcept
  {
    node->next   = spare_nodes_;
    spare_nodes_ = node;
  }

  size_class_index index_;
  address_map<free_block> by_start_;
  address_map<free_block> by_end_;
  std::size_t free_bytes_{0};
  std::vector<std::unique_ptr<free_block[]>> slabs_;
  free_block* spare_nodes_{nullptr};
  std::array<recent_free, recent_capacity> recent_{};
  std::size_t recent_count_{0};
  std::size_t recent_bytes_{0};
  int recent_score_{0};
  unsigned recent_probe_{0};
};

static_assert(coalescing_free_store<coalescing_free_list>);

}  // namespace rmm::mr::detail
