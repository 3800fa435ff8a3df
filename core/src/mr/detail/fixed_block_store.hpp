// SPDX-License-Identifier: Apache-2.0
#pragma once

// The free memory of one owner for fixed_size_memory_resource: a stack of equal blocks. Push and
// pop are O(1); ranges coming in are cut into blocks.

#include "free_store.hpp"
#include "memory_range.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace rmm::mr::detail {

class fixed_block_store {
 public:
  explicit fixed_block_store(std::size_t block_size) : block_size_{block_size} {}

  /// Blocks never merge: every free block has the same size (free_store.hpp).
  static constexpr bool coalesces = false;

  /// Cuts `range` into blocks. Always true: a stack cannot tell a double free without a lookup
  /// per free, which this store exists to avoid.
  [[nodiscard]] bool insert(memory_range range, chunk_starts const&, std::uint64_t free_seq = 0)
  {
    for (auto p = range.start; p < range.start + range.size; p += block_size_) { blocks_.push_back({p, free_seq}); }
    return true;
  }

  /// The same as insert(): a stack reuses the latest free first anyway.
  [[nodiscard]] bool insert_recent(memory_range range, chunk_starts const& chunks, std::uint64_t free_seq)
  {
    return insert(range, chunks, free_seq);
  }
  void spill(chunk_starts const&) noexcept {}

  /// The latest free: what take() pops anyway.
  [[nodiscard]] std::optional<memory_range> take_recent(std::size_t bytes) { return take(bytes, {}); }

  [[nodiscard]] std::optional<memory_range> take(std::size_t bytes, chunk_starts const& = {})
  {
    if (bytes > block_size_ || blocks_.empty()) { return std::nullopt; }
    auto const p = blocks_.back().start;
    blocks_.pop_back();
    return memory_range{p, block_size_};
  }

  /// As take(), from blocks freed at or before `max_seq` only. Older blocks sit near the front,
  /// so a short scan from there finds one if any qualifies.
  [[nodiscard]] std::optional<memory_range> take_freed_before(std::size_t bytes,
                                                              std::uint64_t max_seq,
                                                              chunk_starts const& = {})
  {
    if (bytes > block_size_) { return std::nullopt; }
    auto const scan = std::min<std::size_t>(blocks_.size(), 16);
    for (std::size_t i = 0; i < scan; ++i) {
      if (blocks_[i].free_seq <= max_seq) {
        auto const p = blocks_[i].start;
        blocks_[i]   = blocks_.back();
        blocks_.pop_back();
        return memory_range{p, block_size_};
      }
    }
    return std::nullopt;
  }

  template <class Sink>
  void drain(Sink&& sink)
  {
    for (auto const& b : blocks_) { sink(memory_range{b.start, block_size_}); }
    blocks_.clear();
  }

  /// Removes every block freed at or before `max_seq`, handing each to `sink(memory_range)`.
  template <class Sink>
  void drain_freed_before(std::uint64_t max_seq, Sink&& sink)
  {
    auto const keep =
      std::stable_partition(blocks_.begin(), blocks_.end(), [max_seq](block const& b) { return b.free_seq > max_seq; });
    for (auto it = keep; it != blocks_.end(); ++it) { sink(memory_range{it->start, block_size_}); }
    blocks_.erase(keep, blocks_.end());
  }

  /// Removes all blocks of `range` if every one of them is free here.
  bool remove_exact(memory_range range, chunk_starts const& = {})
  {
    auto const inside = [&](block const& b) { return b.start >= range.start && b.start < range.start + range.size; };
    auto const count  = static_cast<std::size_t>(std::count_if(blocks_.begin(), blocks_.end(), inside));
    if (count * block_size_ != range.size) { return false; }
    blocks_.erase(std::remove_if(blocks_.begin(), blocks_.end(), inside), blocks_.end());
    return true;
  }

  template <class F>
  void for_each(F&& f) const
  {
    for (auto const& b : blocks_) { f(memory_range{b.start, block_size_}); }
  }

  [[nodiscard]] std::size_t free_bytes() const noexcept { return blocks_.size() * block_size_; }
  [[nodiscard]] std::size_t block_count() const noexcept { return blocks_.size(); }
  [[nodiscard]] std::size_t largest_block() const noexcept { return blocks_.empty() ? 0 : block_size_; }

 private:
  struct block {
    std::uintptr_t start;
    std::uint64_t free_seq;
  };
  std::size_t block_size_;
  std::vector<block> blocks_;
};

static_assert(free_store<fixed_block_store> && !coalescing_free_store<fixed_block_store>);

}  // namespace rmm::mr::detail
