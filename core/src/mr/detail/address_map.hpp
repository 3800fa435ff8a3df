// SPDX-License-Identifier: Apache-2.0
#pragma once

// Open-addressing hash map from a device address to a node pointer. The sub-allocators look up
// free neighbours by address on every deallocation; std::unordered_map would allocate a node per
// insertion, this does not. Keys are non-zero addresses; linear probing; deletion shifts later
// entries back so no tombstones accumulate.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rmm::mr::detail {

template <class Value>
class address_map {
 public:
  explicit address_map(std::size_t initial_capacity = 64) { rehash(std::bit_ceil(initial_capacity)); }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// The value stored for `key`, or nullptr.
  [[nodiscard]] Value* find(std::uintptr_t key) const noexcept
  {
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      auto const& s = slots_[i];
      if (s.key == key) { return s.value; }
      if (s.key == 0) { return nullptr; }
    }
  }

  /// Makes room for one more key, so that the next insert() cannot throw. Throws std::bad_alloc
  /// with the map unchanged.
  void reserve_one_more()
  {
    if ((size_ + 1) * 2 > slots_.size()) { rehash(slots_.size() * 2); }
  }

  /// Inserts or overwrites. Throws std::bad_alloc with the map unchanged.
  void insert(std::uintptr_t key, Value* value)
  {
    reserve_one_more();
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      auto& s = slots_[i];
      if (s.key == key) {
        s.value = value;
        return;
      }
      if (s.key == 0) {
        s = {key, value};
        ++size_;
        return;
      }
    }
  }

  /// Removes `key` if present; returns whether it was.
  bool erase(std::uintptr_t key) noexcept
  {
    std::size_t i = slot_of(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == 0) { return false; }
      i = (i + 1) & mask_;
    }
    // Backward-shift: move later members of the probe run into the hole while that keeps them
    // reachable from their home slot.
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (slots_[j].key == 0) { break; }
      auto const home                = slot_of(slots_[j].key);
      bool const reachable_from_hole = ((j - home) & mask_) >= ((j - i) & mask_);
      if (reachable_from_hole) {
        slots_[i] = slots_[j];
        i         = j;
      }
    }
    slots_[i] = {};
    --size_;
    return true;
  }

 private:
  struct slot {
    std::uintptr_t key{0};
    Value* value{nullptr};
  };

  [[nodiscard]] std::size_t slot_of(std::uintptr_t key) const noexcept
  {
    // Addresses are 256-aligned: drop the zero bits, then multiplicative hashing.
    return static_cast<std::size_t>(((key >> 8) * 0x9E3779B97F4A7C15ULL) >> shift_);
  }

  void rehash(std::size_t capacity)
  {
    std::vector<slot> old(capacity);  // allocated before anything changes
    old.swap(slots_);
    mask_  = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
    size_  = 0;
    for (auto const& s : old) {
      if (s.key != 0) { insert(s.key, s.value); }
    }
  }

  std::vector<slot> slots_;
  std::size_t mask_{0};
  unsigned shift_{64};
  std::size_t size_{0};
};

}  // namespace rmm::mr::detail
