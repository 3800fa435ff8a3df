// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace rmm::mr::detail {

/**
 * A map from block addresses to `Value`, split into independently locked shards so that threads
 * allocating and freeing different blocks rarely wait for each other (one map behind one mutex
 * made the tracking and aligned adaptors 10x slower on 8 threads than on one).
 */
template <class Value, std::size_t Shards = 64>
class sharded_pointer_map {
 public:
  /// Adds or replaces the value for `key`. Throws std::bad_alloc.
  void insert(void const* key, Value value)
  {
    auto& target = shard_of(key);
    std::lock_guard lock{target.mutex};
    target.entries.insert_or_assign(key, std::move(value));
  }

  /// Removes `key`, moving its value to `value`; false (and `value` untouched) if it is absent.
  bool extract(void const* key, Value& value)
  {
    auto& target = shard_of(key);
    std::lock_guard lock{target.mutex};
    auto found = target.entries.find(key);
    if (found == target.entries.end()) { return false; }
    value = std::move(found->second);
    target.entries.erase(found);
    return true;
  }

  /// Calls `visit(key, value)` for every entry, one shard locked at a time (entries added or
  /// removed meanwhile in other shards may or may not be seen).
  template <class Visitor>
  void for_each(Visitor&& visit) const
  {
    for (auto const& part : shards_) {
      std::lock_guard lock{part.mutex};
      for (auto const& [key, value] : part.entries) { visit(key, value); }
    }
  }

 private:
  struct alignas(64) shard {
    mutable std::mutex mutex;
    std::unordered_map<void const*, Value> entries;
  };

  shard& shard_of(void const* key) noexcept
  {
    // Blocks are at least 256-byte aligned: drop those bits, then mix the rest.
    auto const bits = (reinterpret_cast<std::uintptr_t>(key) >> 8) * 0x9e3779b97f4a7c15ULL;
    return shards_[(bits >> 32) % Shards];
  }

  std::array<shard, Shards> shards_;
};

}  // namespace rmm::mr::detail
