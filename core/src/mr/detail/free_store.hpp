// SPDX-License-Identifier: Apache-2.0
#pragma once

// What stream_ordered_suballocator asks of a free store, the object that keeps the free memory of
// one arena (a stream's, or the clean reserve). The suballocator branches on what a store can do,
// as these concepts state it, never on which store it is: coalescing_free_list satisfies
// coalescing_free_store, fixed_block_store only free_store. All of it is resolved at compile time.
//
// `chunks` arguments are the chunk starts free memory must not merge across; `free_seq` numbers a
// free among its arena's frees, so the arena's event, which covers the frees up to a number, tells
// when memory is safe for other streams (0: never used on a stream, safe at once).

#include "memory_range.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

namespace rmm::mr::detail {

/// What every free store provides. Each arena holds one, made by the engine's factory and moved
/// into place.
template <class Store>
concept free_store = std::move_constructible<Store> && requires(Store& store,
                                                                Store const& const_store,
                                                                memory_range range,
                                                                chunk_starts const& chunks,
                                                                std::size_t bytes,
                                                                std::uint64_t free_seq,
                                                                void (*range_sink)(memory_range))
{
  // Whether touching free ranges merge into one block (see coalescing_free_store). A constant, so
  // branching on it costs nothing on the common path.
  typename std::bool_constant<Store::coalesces>;

  // A free on the arena's stream, the common path: it may be set aside unmerged, for the next
  // allocation of the same size. False refuses a range that is free already (a double free).
  requires std::same_as<decltype(store.insert_recent(range, chunks, free_seq)), bool>;
  // Memory arriving from elsewhere (growth, other arenas, the clean reserve): stored at once.
  requires std::same_as<decltype(store.insert(range, chunks, free_seq)), bool>;
  // The common path's first try: an exact fit among the latest frees, with no search.
  requires std::same_as<decltype(store.take_recent(bytes)), std::optional<memory_range>>;
  // Room for `bytes` from any free block: the arena's own stream may use it at once.
  requires std::same_as<decltype(store.take(bytes, chunks)), std::optional<memory_range>>;
  // Room for `bytes` freed at or before `free_seq`: what another stream may use behind the arena's
  // event (or the host, after waiting for it).
  requires std::same_as<decltype(store.take_freed_before(bytes, free_seq, chunks)), std::optional<memory_range>>;
  // Merges what insert_recent() set aside, so that reports see whole blocks.
  store.spill(chunks);
  // Everything, to the clean reserve around a device synchronization.
  store.drain(range_sink);
  // What a completed event covers, to the clean reserve with no wait.
  store.drain_freed_before(free_seq, range_sink);
  // Removes `range` only if all of it is free: a whole chunk then goes back to the upstream.
  requires std::same_as<decltype(store.remove_exact(range, chunks)), bool>;

  // Reporting (statistics, out-of-memory messages, tests) and retiring empty arenas.
  const_store.for_each(range_sink);
  requires std::same_as<decltype(const_store.free_bytes()), std::size_t>;
  requires std::same_as<decltype(const_store.block_count()), std::size_t>;
  requires std::same_as<decltype(const_store.largest_block()), std::size_t>;
};

/// A free store whose touching free ranges merge into one block, and which says so
/// (`coalesces = true`). Only such a store lets the suballocator keep the rest of a clean block
/// beside the part a stream took, and grow into one address range (expandable_region), where
/// growth extends the free block at the end instead of adding a separate one.
template <class Store>
concept coalescing_free_store = free_store<Store> && Store::coalesces && requires(Store& store,
                                                                                  chunk_starts const& chunks,
                                                                                  std::size_t bytes,
                                                                                  std::uintptr_t address,
                                                                                  std::uint64_t free_seq,
                                                                                  bool (*movable)(std::uintptr_t),
                                                                                  void (*granule_sink)(std::uintptr_t))
{
  // A whole good-fit block of at least `bytes`: the caller keeps its rest next to what it hands
  // out, in the arena it will be freed to, so that the two merge again.
  requires std::same_as<decltype(store.take_whole(bytes, chunks)), std::optional<memory_range>>;
  // The free block that ends at the region's end: growth extends it, so that only the difference
  // is mapped, and release() unmaps it.
  requires std::same_as<decltype(store.size_of_block_ending_at(address, chunks)), std::size_t>;
  requires std::same_as<decltype(store.remove_block_ending_at(address, chunks)), std::optional<memory_range>>;
  // Idle whole granules in the middle of the region, moved to its end instead of mapping more.
  requires std::same_as<
    decltype(store.take_whole_granules(bytes, bytes, address, free_seq, chunks, movable, granule_sink)), std::size_t>;
  requires std::same_as<decltype(store.whole_granule_bytes(bytes, address, free_seq, chunks, movable)), std::size_t>;
};

}  // namespace rmm::mr::detail
