// SPDX-License-Identifier: Apache-2.0
#pragma once

// Size-class index of free blocks with O(1) good-fit search (two-level segregated fit, TLSF).
//
// Sizes are multiples of 256 bytes. Each power-of-two range is split into 32 classes, so a block
// found for a request is at most 1/32 larger than the smallest class that fits it, whatever the
// number of free blocks: the search does not slow down as holes pile up. Blocks are intrusive
// doubly-linked lists per class; two bitmaps find the first non-empty class at or above a
// request with two bit scans.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace rmm::mr::detail {

/// A free range of device memory, as the host sees it (device memory cannot hold headers).
struct free_block {
  std::uintptr_t start{};
  std::size_t size{};
  std::uint64_t free_seq{};  // when it was freed, in its owner's sequence (merges keep the latest)
  free_block* prev{};        // in its size class list
  free_block* next{};

  [[nodiscard]] std::uintptr_t end() const noexcept { return start + size; }
};

class size_class_index {
 public:
  static constexpr std::size_t granularity{256};

  void insert(free_block* block) noexcept
  {
    auto const [fl, sl] = class_of(units(block->size));
    block->prev         = nullptr;
    block->next         = heads_[fl][sl];
    if (block->next != nullptr) {
      block->next->prev = block;
    } else {
      tails_[fl][sl] = block;
    }
    heads_[fl][sl] = block;
    first_level_ |= std::uint64_t{1} << fl;
    second_level_[fl] |= std::uint32_t{1} << sl;
  }

  void remove(free_block* block) noexcept
  {
    auto const [fl, sl] = class_of(units(block->size));
    if (block->prev != nullptr) {
      block->prev->next = block->next;
    } else {
      heads_[fl][sl] = block->next;
    }
    if (block->next != nullptr) {
      block->next->prev = block->prev;
    } else {
      tails_[fl][sl] = block->prev;
    }
    if (heads_[fl][sl] == nullptr) {
      second_level_[fl] &= ~(std::uint32_t{1} << sl);
      if (second_level_[fl] == 0) { first_level_ &= ~(std::uint64_t{1} << fl); }
    }
  }

  /// Changes a block's size; it keeps its place in its list unless its size class changes.
  void resize(free_block* block, std::size_t size) noexcept
  {
    auto const [fl, sl]         = class_of(units(block->size));
    auto const [new_fl, new_sl] = class_of(units(size));
    if (fl == new_fl && sl == new_sl) {
      block->size = size;
      return;
    }
    remove(block);
    block->size = size;
    insert(block);
  }

  /// A free block of at least `bytes` (a multiple of granularity), or nullptr. Tries the head of
  /// the request's own class first (a closer fit), then the first block of the next larger
  /// non-empty class, where every block fits.
  [[nodiscard]] free_block* find(std::size_t bytes) const noexcept
  {
    auto const u        = units(bytes);
    auto const [fl, sl] = class_of(u);
    if (auto* head = heads_[fl][sl]; head != nullptr && head->size >= bytes) { return head; }
    // Every block in a class above the request's own class is large enough.
    auto [sfl, ssl] = next_class(fl, sl);
    if (sfl >= first_levels) { return nullptr; }
    std::uint32_t sl_map = ssl < second_levels ? second_level_[sfl] & (~std::uint32_t{0} << ssl) : 0;
    if (sl_map == 0) {
      std::uint64_t const fl_map = sfl + 1 < first_levels ? first_level_ & (~std::uint64_t{0} << (sfl + 1)) : 0;
      if (fl_map == 0) { return nullptr; }
      sfl    = static_cast<unsigned>(std::countr_zero(fl_map));
      sl_map = second_level_[sfl];
    }
    return heads_[sfl][static_cast<unsigned>(std::countr_zero(sl_map))];
  }

  /// A free block of at least `bytes` freed at or before `max_seq`, or nullptr. Bounded search
  /// (a few candidates per class, oldest first: blocks enter a class at its head, so its tail holds
  /// the earliest frees): for the rare path that moves memory between owners.
  [[nodiscard]] free_block* find_freed_before(std::size_t bytes, std::uint64_t max_seq) const noexcept
  {
    constexpr int per_class = 8;
    auto [fl, sl]           = class_of(units(bytes));
    for (;;) {
      int budget = per_class;
      for (auto* b = tails_[fl][sl]; b != nullptr && budget-- > 0; b = b->prev) {
        if (b->size >= bytes && b->free_seq <= max_seq) { return b; }
      }
      // The next non-empty class above (fl, sl).
      auto [nfl, nsl] = next_class(fl, sl);
      if (nfl >= first_levels) { return nullptr; }
      std::uint32_t sl_map = second_level_[nfl] & (~std::uint32_t{0} << nsl);
      if (sl_map == 0) {
        std::uint64_t const fl_map = nfl + 1 < first_levels ? first_level_ & (~std::uint64_t{0} << (nfl + 1)) : 0;
        if (fl_map == 0) { return nullptr; }
        nfl    = static_cast<unsigned>(std::countr_zero(fl_map));
        sl_map = second_level_[nfl];
      }
      fl = nfl;
      sl = static_cast<unsigned>(std::countr_zero(sl_map));
    }
  }

  /// The largest free block, or nullptr (scans only the highest non-empty class).
  [[nodiscard]] free_block* largest() const noexcept
  {
    if (first_level_ == 0) { return nullptr; }
    auto const fl    = static_cast<unsigned>(63 - std::countl_zero(first_level_));
    auto const sl    = static_cast<unsigned>(31 - std::countl_zero(second_level_[fl]));
    free_block* best = heads_[fl][sl];
    for (auto* b = best; b != nullptr; b = b->next) {
      if (b->size > best->size) { best = b; }
    }
    return best;
  }

  /// Calls f(block) for every block; f must not modify the index.
  template <class F>
  void for_each(F&& f) const
  {
    for (unsigned fl = 0; fl < first_levels; ++fl) {
      if ((first_level_ & (std::uint64_t{1} << fl)) == 0) { continue; }
      for (unsigned sl = 0; sl < second_levels; ++sl) {
        for (auto* b = heads_[fl][sl]; b != nullptr; b = b->next) { f(b); }
      }
    }
  }

 private:
  static constexpr unsigned second_level_bits = 5;
  static constexpr unsigned second_levels     = 1U << second_level_bits;
  static constexpr unsigned first_levels      = 64;

  struct class_id {
    unsigned fl;
    unsigned sl;
  };

  [[nodiscard]] static std::uint64_t units(std::size_t bytes) noexcept { return bytes / granularity; }

  /// Sizes below 32 units have a class each; above, 32 classes per power of two.
  [[nodiscard]] static class_id class_of(std::uint64_t u) noexcept
  {
    if (u < second_levels) { return {0, static_cast<unsigned>(u)}; }
    auto const f = static_cast<unsigned>(63 - std::countl_zero(u));  // >= second_level_bits
    return {f - second_level_bits + 1, static_cast<unsigned>(u >> (f - second_level_bits)) - second_levels};
  }

  [[nodiscard]] static class_id next_class(unsigned fl, unsigned sl) noexcept
  {
    return sl + 1 < second_levels ? class_id{fl, sl + 1} : class_id{fl + 1, 0};
  }

  std::uint64_t first_level_{0};
  std::array<std::uint32_t, first_levels> second_level_{};
  std::array<std::array<free_block*, second_levels>, first_levels> heads_{};
  std::array<std::array<free_block*, second_levels>, first_levels> tails_{};
};

}  // namespace rmm::mr::detail
