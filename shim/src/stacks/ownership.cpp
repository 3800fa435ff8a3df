// SPDX-License-Identifier: Apache-2.0
#include "stacks/ownership.hpp"

#include <algorithm>
#include <mutex>
#include <new>
#include <thread>

namespace rmm::shim {

void ownership_table::spin_lock::lock() noexcept
{
  for (int spins = 0;; ++spins) {
    if (!locked_.exchange(true, std::memory_order_acquire)) { return; }
    while (locked_.load(std::memory_order_relaxed)) {
      if (spins > 64) { std::this_thread::yield(); }
    }
  }
}

ownership_table::ownership_table()
{
  for (auto& s : shards_) { s.slots.resize(64); }
}

std::size_t ownership_table::hash(std::uintptr_t ptr) noexcept
{
  // Blocks are at least 256-byte aligned: drop those bits, then mix.
  auto const h = (ptr >> 8) * 0x9E3779B97F4A7C15ULL;
  return static_cast<std::size_t>(h ^ (h >> 32));
}

std::size_t ownership_table::home(shard const& s, std::uintptr_t ptr) noexcept
{
  return (hash(ptr) >> 6) & (s.slots.size() - 1);
}

void ownership_table::grow(shard& s)
{
  std::vector<slot> old(s.slots.size() * 2);
  old.swap(s.slots);
  s.size = 0;
  for (auto const& entry : old) {
    if (entry.key == 0) { continue; }
    auto const mask = s.slots.size() - 1;
    for (auto i = home(s, entry.key);; i = (i + 1) & mask) {
      if (s.slots[i].key == 0) {
        s.slots[i] = entry;
        ++s.size;
        break;
      }
    }
  }
}

void ownership_table::widen_range(std::uintptr_t ptr, std::size_t size) noexcept
{
  // Only ever widened: a block given back leaves the range as it was, which is merely less precise.
  auto lowest = lowest_.load(std::memory_order_relaxed);
  while (ptr < lowest && !lowest_.compare_exchange_weak(lowest, ptr, std::memory_order_relaxed)) {}
  auto const block_end = ptr + std::max<std::size_t>(size, 1);
  auto end             = end_.load(std::memory_order_relaxed);
  while (block_end > end && !end_.compare_exchange_weak(end, block_end, std::memory_order_relaxed)) {}
}

void ownership_table::insert(std::uintptr_t ptr, block_owner owner)
{
  widen_range(ptr, owner.size);  // first: a free on another thread may follow as soon as it is in
  auto& s = shard_of(ptr);
  std::lock_guard lock{s.lock};
  if ((s.size + 1) * 2 > s.slots.size()) { grow(s); }
  auto const mask = s.slots.size() - 1;
  for (auto i = home(s, ptr);; i = (i + 1) & mask) {
    if (s.slots[i].key == ptr) {
      s.slots[i].owner = owner;
      return;
    }
    if (s.slots[i].key == 0) {
      s.slots[i] = {ptr, owner};
      ++s.size;
      return;
    }
  }
}

std::optional<block_owner> ownership_table::extract_recorded(std::uintptr_t ptr) noexcept
{
  auto& s = shard_of(ptr);
  std::lock_guard lock{s.lock};
  auto const mask = s.slots.size() - 1;
  auto i          = home(s, ptr);
  while (s.slots[i].key != ptr) {
    if (s.slots[i].key == 0) { return std::nullopt; }
    i = (i + 1) & mask;
  }
  auto const owner = s.slots[i].owner;
  erase_at(s, i);
  return owner;
}

void ownership_table::erase_at(shard& s, std::size_t i) noexcept
{
  auto const mask = s.slots.size() - 1;
  // Backward-shift deletion: later members of the probe run move into the hole while they stay
  // reachable from their home slot, so no tombstones pile up.
  for (auto j = (i + 1) & mask;; j = (j + 1) & mask) {
    if (s.slots[j].key == 0) { break; }
    auto const h = home(s, s.slots[j].key);
    if (((j - h) & mask) >= ((j - i) & mask)) {
      s.slots[i] = s.slots[j];
      i          = j;
    }
  }
  s.slots[i] = {};
  --s.size;
}

std::pair<std::size_t, std::size_t> ownership_table::forget_device(int device) noexcept
{
  std::size_t blocks = 0;
  std::size_t bytes  = 0;
  for (auto& s : shards_) {
    std::lock_guard lock{s.lock};
    for (std::size_t i = 0; i < s.slots.size();) {
      auto const& entry = s.slots[i];
      if (entry.key == 0 || entry.owner.device != device) {
        ++i;
        continue;
      }
      ++blocks;
      bytes += entry.owner.size;
      erase_at(s, i);  // another entry may have moved into slot i: look at it again
    }
  }
  return {blocks, bytes};
}

std::optional<block_owner> ownership_table::find(std::uintptr_t ptr) const noexcept
{
  if (surely_foreign(ptr)) { return std::nullopt; }
  auto const& s = shard_of(ptr);
  std::lock_guard lock{s.lock};
  auto const mask = s.slots.size() - 1;
  for (auto i = home(s, ptr);; i = (i + 1) & mask) {
    if (s.slots[i].key == ptr) { return s.slots[i].owner; }
    if (s.slots[i].key == 0) { return std::nullopt; }
  }
}

std::optional<std::pair<std::uintptr_t, block_owner>> ownership_table::find_containing(std::uintptr_t ptr) const
{
  if (surely_foreign(ptr)) { return std::nullopt; }
  if (auto exact = find(ptr)) { return std::pair{ptr, *exact}; }
  for (auto const& s : shards_) {
    std::lock_guard lock{s.lock};
    for (auto const& entry : s.slots) {
      if (entry.key != 0 && ptr > entry.key && ptr - entry.key < entry.owner.size) {
        return std::pair{entry.key, entry.owner};
      }
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::size_t, std::size_t>> ownership_table::live_per_device() const
{
  std::vector<std::pair<std::size_t, std::size_t>> live;
  for (auto const& s : shards_) {
    std::lock_guard lock{s.lock};
    for (auto const& entry : s.slots) {
      if (entry.key == 0) { continue; }
      auto const device = static_cast<std::size_t>(entry.owner.device);
      if (live.size() <= device) { live.resize(device + 1); }
      live[device].first += 1;
      live[device].second += entry.owner.size;
    }
  }
  return live;
}

}  // namespace rmm::shim
