// SPDX-License-Identifier: Apache-2.0
#pragma once

// stream_ordered_suballocator: finding a stream's arena, moving memory between arenas, and
// retiring arenas nobody uses. Included by stream_ordered_suballocator.cpp, which instantiates it.

#include "../../detail/cuda_driver.hpp"
#include "stream_identity.hpp"
#include "stream_ordered_suballocator.hpp"

#include <rmm/logger.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

namespace rmm::mr::detail {

/// Per-thread cache of the arenas a thread used, so the common path takes no shared lock:
/// direct-mapped by (engine, stream id), since one thread may use many engines (binning's bins).
/// An entry is a hint: the arena is checked, under its lock, to still belong to the stream.
struct cached_arena {
  std::uint64_t owner_id{0};
  std::uint64_t stream_id{0};
  std::uint64_t thread{0};
  void* arena{nullptr};
};
struct arena_cache {
  static constexpr std::size_t size = 64;
  std::array<cached_arena, size> entries{};
  static std::size_t slot(std::uint64_t owner_id, std::uint64_t stream_id) noexcept
  {
    auto const h = (owner_id * 0x9E3779B97F4A7C15ULL) ^ (stream_id * 0xC2B2AE3D27D4EB4FULL);
    return static_cast<std::size_t>((h ^ (h >> 29)) & (size - 1));
  }
};
arena_cache& thread_arena_cache() noexcept;

template <class FreeStore>
bool stream_ordered_suballocator<FreeStore>::is_shared_large(cudaStream_t stream, std::size_t size) const noexcept
{
  return options_.shared_arena_threshold && size >= *options_.shared_arena_threshold &&
         options_.per_thread_default_arenas && (stream == cudaStream_t{} || stream == cudaStreamLegacy);
}

template <class FreeStore>
bool stream_ordered_suballocator<FreeStore>::keeps_clean_rest(cudaStream_t stream, std::size_t size) const noexcept
{
  if (is_shared_large(stream, size)) { return true; }
  return !options_.per_thread_default_arenas && arena_count_.load(std::memory_order_relaxed) == 1 &&
         !synchronous_use_.load(std::memory_order_relaxed);
}

template <class FreeStore>
auto stream_ordered_suballocator<FreeStore>::key_for(cudaStream_t stream, std::size_t size) const -> arena_key
{
  arena_key key{stream_id(stream, device_), 0};
  // The arena resource gives each thread its own arena on the legacy stream for small blocks:
  // threads sharing it do not contend, and since it is one stream they may exchange memory without
  // waiting. Large blocks go to the stream's shared arena, whichever thread allocates or frees
  // them (autograd frees on one thread what another allocated), where they coalesce.
  if (options_.per_thread_default_arenas && (stream == cudaStream_t{} || stream == cudaStreamLegacy) &&
      !is_shared_large(stream, size)) {
    key.thread = thread_token();
  }
  return key;
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::take_clean(arena& requester,
                                                                               cudaStream_t stream,
                                                                               std::size_t size)
{
  if constexpr (coalescing) {
    if (keeps_clean_rest(stream, size)) {
      // Take the whole block: the rest stays next to what is handed out, in the arena it will be
      // freed to, so the two coalesce again (a cut would leave the rest in the clean reserve, where
      // nothing freed on the stream merges with it, and large free blocks would splinter at every
      // boundary between the two).
      std::optional<memory_range> whole;
      {
        std::lock_guard lock{clean_.mutex};
        whole = clean_.free.take_whole(size, current_chunks(clean_));
      }
      if (!whole) { return std::nullopt; }
      if (whole->size > size) {
        // Still no pending work on any stream: sequence 0 lets other streams take it through the
        // arena's event at once.
        std::lock_guard lock{requester.mutex};
        (void)requester.free.insert({whole->start + size, whole->size - size}, current_chunks(requester), 0);
        requester.holds_clean = true;
      }
      return memory_range{whole->start, size};
    }
  }
  return take_from(clean_, size);
}

template <class FreeStore>
std::unique_lock<light_mutex> stream_ordered_suballocator<FreeStore>::lock_arena(arena_key key, arena*& found)
{
  auto& entry = thread_arena_cache().entries[arena_cache::slot(id_, key.stream_id ^ key.thread)];
  if (entry.owner_id == id_ && entry.stream_id == key.stream_id && entry.thread == key.thread) {
    auto* cached = static_cast<arena*>(entry.arena);
    std::unique_lock lock{cached->mutex};
    if (cached->live && cached->key == key) {
      found = cached;
      return lock;
    }
  }
  if (arena_count_.load(std::memory_order_relaxed) >= arenas_before_reclaim) { trim_arenas(); }
  for (;;) {  // the arena found may be retired before its lock is taken: look again
    arena& a = find_or_create(key);
    std::unique_lock lock{a.mutex};
    if (a.live && a.key == key) {
      entry = {id_, key.stream_id, key.thread, &a};
      found = &a;
      return lock;
    }
  }
}

template <class FreeStore>
auto stream_ordered_suballocator<FreeStore>::find_or_create(arena_key key) -> arena&
{
  {
    std::shared_lock lock{arenas_mutex_};
    if (auto it = arenas_.find(key); it != arenas_.end()) { return *it->second; }
  }
  std::unique_lock lock{arenas_mutex_};
  if (auto it = arenas_.find(key); it != arenas_.end()) { return *it->second; }
  arena* a = nullptr;
  if (!spare_arenas_.empty()) {
    a = spare_arenas_.back();
    spare_arenas_.pop_back();
  } else {
    all_arenas_.push_back(std::make_unique<arena>(make_store_()));
    a = all_arenas_.back().get();
    spare_arenas_.reserve(all_arenas_.size());  // retiring never allocates
  }
  try {
    arenas_.emplace(key, a);
  } catch (...) {
    spare_arenas_.push_back(a);
    throw;
  }
  arena_count_.store(arenas_.size(), std::memory_order_relaxed);
  std::lock_guard arena_lock{a->mutex};
  a->key             = key;
  a->live            = true;
  a->used_since_scan = true;
  a->free_seq = a->claimed_seq = a->covered_seq = a->harvested_seq = 0;  // the event says nothing yet
  return *a;
}

template <class FreeStore>
auto stream_ordered_suballocator<FreeStore>::harvest(arena const* requester) -> harvest_result
{
  harvest_result result;
  std::vector<memory_range> completed;
  std::vector<arena*> idle;
  {
    std::shared_lock lock{arenas_mutex_};
    result.arenas = arenas_.size();
    for (auto const& [key, a] : arenas_) {
      // The requester's stream takes from its own arenas without waiting (steal) anyway.
      if (requester != nullptr && key.stream_id == requester->key.stream_id) { continue; }
      // Read what the event covers before asking whether it completed: a record made after the
      // read can only complete later, so a completed event covers at least what was read.
      std::uint64_t covered = 0;
      cudaEvent_t event{};
      {
        std::lock_guard arena_lock{a->mutex};
        if (a->event != nullptr && a->covered_seq > a->harvested_seq && a->free.free_bytes() > 0) {
          covered = a->covered_seq;
          event   = a->event;
        }
      }
      bool const passed = event != nullptr && rmm::detail::cuda_driver_table().cuEventQuery(event) == CUDA_SUCCESS;
      std::lock_guard arena_lock{a->mutex};
      if (passed) {
        a->free.drain_freed_before(covered, [&completed](memory_range r) { completed.push_back(r); });
        a->harvested_seq = std::max(a->harvested_seq, covered);
      } else if (a->holds_clean) {
        // Taken from the reserve whole and never freed on the stream: clean without any wait.
        a->free.drain_freed_before(0, [&completed](memory_range r) { completed.push_back(r); });
      }
      a->holds_clean = false;
      result.stranded_bytes += a->free.free_bytes();
      if (a->free.free_bytes() == 0 && !a->used_since_scan && a->pins == 0) { idle.push_back(a); }
      a->used_since_scan = false;
    }
  }
  if (!completed.empty()) {
    std::lock_guard lock{clean_.mutex};
    auto const& chunks = current_chunks(clean_);
    for (auto const& r : completed) {
      if (!clean_.free.insert(r, chunks, 0)) [[unlikely]] {
        RMM_LOG_ERROR("{}: {} is free twice; ignored", options_.name, reinterpret_cast<void*>(r.start));
      }
    }
  }
  if (!idle.empty()) { retire_idle(idle); }
  return result;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::retire_idle(std::vector<arena*> const& candidates)
{
  std::unique_lock lock{arenas_mutex_};
  for (arena* a : candidates) {
    std::lock_guard arena_lock{a->mutex};
    if (!a->live || a->free.free_bytes() != 0 || a->used_since_scan || a->pins != 0) { continue; }
    arenas_.erase(a->key);
    a->live = false;
    spare_arenas_.push_back(a);
  }
  arena_count_.store(arenas_.size(), std::memory_order_relaxed);
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::retire_all_empty()
{
  std::vector<arena*> all;
  {
    std::shared_lock arenas_lock{arenas_mutex_};
    for (auto const& [key, a] : arenas_) {
      std::lock_guard arena_lock{a->mutex};
      a->used_since_scan = false;  // retired if empty and no call holds it; a cached one is found again
      all.push_back(a);
    }
  }
  retire_idle(all);
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::trim_arenas()
{
  std::lock_guard lock{growth_mutex_};
  if (arena_count_.load(std::memory_order_relaxed) < arenas_before_reclaim) { return; }  // trimmed meanwhile
  move_all_free_to_clean();
  retire_all_empty();
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::steal(arena& thief,
                                                                          cudaStream_t stream,
                                                                          std::size_t bytes)
{
  std::shared_lock lock{arenas_mutex_};
  for (auto const& [key, victim] : arenas_) {
    if (victim == &thief) { continue; }
    // Per-thread arenas of one legacy stream (the arena resource) need no event between them.
    bool const same_stream = key.stream_id == thief.key.stream_id;
    std::optional<memory_range> range;
    cudaEvent_t event{};
    {
      std::lock_guard victim_lock{victim->mutex};
      if (same_stream) {
        range = victim->free.take(bytes, current_chunks(*victim));
      } else {
        // Before any record only never-used memory (freed at sequence 0) qualifies, and it needs
        // no wait.
        range = victim->free.take_freed_before(bytes, victim->covered_seq, current_chunks(*victim));
        event = victim->event;
      }
    }
    if (!range) { continue; }
    if (!same_stream && event != nullptr) {
      // The event was recorded after the block was freed (a later record of it is later still):
      // waiting on it orders our use after the work that last used the block.
      if (auto const status = rmm::detail::cuda_driver_table().cuStreamWaitEvent(stream, event, 0);
          status != CUDA_SUCCESS) {
        {
          // Back as a fresh free: no record of the victim's event covers it any more.
          std::lock_guard victim_lock{victim->mutex};
          (void)victim->free.insert(*range, current_chunks(*victim), ++victim->free_seq);
        }
        rmm::detail::throw_cu_error(status, "cuStreamWaitEvent", __FILE__, __LINE__);
      }
    }
    return range;
  }
  return std::nullopt;
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::take_after_host_wait(std::size_t bytes)
{
  std::optional<memory_range> range;
  cudaEvent_t event{};
  {
    std::shared_lock lock{arenas_mutex_};
    for (auto const& [key, victim] : arenas_) {
      std::lock_guard victim_lock{victim->mutex};
      range = victim->free.take_freed_before(bytes, victim->covered_seq, current_chunks(*victim));
      if (range) {
        event = victim->event;
        break;
      }
    }
  }
  if (!range) { return std::nullopt; }
  // Outside every lock: the wait lasts as long as the victim's stream needs. The event was recorded
  // after the block was freed (a later record of it is later still), so once it completed nothing
  // uses the block any more. No event: the block was never used.
  if (event == nullptr) { return range; }
  if (auto const status = rmm::detail::cuda_driver_table().cuEventSynchronize(event); status != CUDA_SUCCESS) {
    deallocate_after_device_sync(*range, cudaStream_t{});
    rmm::detail::throw_cu_error(status, "cuEventSynchronize", __FILE__, __LINE__);
  }
  return range;
}

}  // namespace rmm::mr::detail
