#pragma once

// Template definitions of stream_ordered_suballocator; included by the .cpp files that
// instantiate it (one per FreeStore).

#include "stream_ordered_suballocator.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/detail/format.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <limits>

namespace rmm::mr::detail {

/// An arena records its event once per this many frees: the cost of cudaEventRecord spread thin,
/// while recent frees still become available to other streams soon.
inline constexpr std::uint64_t frees_per_record = 32;

/// Per-thread cache of the arenas a thread used, so the common path takes no shared lock:
/// direct-mapped by (engine, stream), since one thread may use many engines (binning's bins).
struct cached_arena {
  std::uint64_t owner_id{0};
  cudaStream_t stream{};
  void* arena{nullptr};
};
struct arena_cache {
  static constexpr std::size_t size = 64;
  std::array<cached_arena, size> entries{};
  static std::size_t slot(std::uint64_t owner_id, cudaStream_t stream) noexcept
  {
    auto const h = (owner_id * 0x9E3779B97F4A7C15ULL) ^ (reinterpret_cast<std::uintptr_t>(stream) >> 4);
    return static_cast<std::size_t>((h ^ (h >> 29)) & (size - 1));
  }
};
arena_cache& thread_arena_cache() noexcept;

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::arena_key_hash::operator()(arena_key const& key) const noexcept
{
  return std::hash<void*>{}(key.stream) ^ (std::hash<std::thread::id>{}(key.thread) << 1);
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::block_size(std::size_t bytes) const noexcept
{
  return (bytes + options_.granularity - 1) / options_.granularity * options_.granularity;
}

template <class FreeStore>
stream_ordered_suballocator<FreeStore>::stream_ordered_suballocator(any_device_resource upstream,
                                                                    suballocator_options options,
                                                                    std::function<FreeStore()> make_store)
  : upstream_{std::move(upstream)},
    options_{std::move(options)},
    make_store_{std::move(make_store)},
    device_{get_current_cuda_device().value()},
    id_{next_suballocator_id()},
    clean_{make_store_()},
    chunk_starts_{std::make_shared<chunk_starts const>()}
{
  auto const initial = block_size(options_.initial_size);
  if (options_.maximum_size) {
    RMM_EXPECTS(initial <= *options_.maximum_size,
                fmt::format("{}: the initial size {} exceeds the maximum size {}",
                            options_.name,
                            rmm::detail::format_bytes_exact(initial),
                            rmm::detail::format_bytes_exact(*options_.maximum_size)));
  }
  if constexpr (std::is_same_v<FreeStore, coalescing_free_list>) {
    if (options_.expandable) {
      region_ = expandable_region::create(device_,
                                          options_.maximum_size.value_or(available_device_memory().second),
                                          options_.maximum_size.has_value());
    }
  }
  if (region_ != nullptr && initial > 0) {
    auto const range = region_->grow(initial);
    add_chunk({range.start, range.size, false});
    insert_clean(range);
  } else if (initial > 0) {
    void* ptr{};
    try {
      ptr = upstream_.allocate(cuda_stream_view{}, initial);
      cuda_stream_view{}.synchronize();  // no pending work: the reserve is clean
    } catch (...) {
      if (ptr != nullptr) { upstream_.deallocate(cuda_stream_view{}, ptr, initial); }
      throw;
    }
    add_chunk({reinterpret_cast<std::uintptr_t>(ptr), initial, false});
    insert_clean({reinterpret_cast<std::uintptr_t>(ptr), initial});
  }
}

template <class FreeStore>
stream_ordered_suballocator<FreeStore>::~stream_ordered_suballocator()
{
  if (region_ == nullptr) {  // the region unmaps its own memory
    for (auto const& c : chunks_) {
      upstream_.deallocate(cuda_stream_view{}, reinterpret_cast<void*>(c.start), c.size);
    }
  }
  for (auto const& [key, a] : arenas_) {
    RMM_ASSERT_CUDA_SUCCESS(cudaEventDestroy(a->event));
  }
}

// ---- the common path ------------------------------------------------------------------------------

template <class FreeStore>
void* stream_ordered_suballocator<FreeStore>::allocate(std::size_t bytes, cuda_stream_view stream)
{
  if (bytes == 0) { return nullptr; }
  if (options_.largest_request && bytes > *options_.largest_request) [[unlikely]] {
    throw rmm::bad_alloc{fmt::format("{} cannot allocate {}: its blocks are {}",
                                     options_.name,
                                     rmm::detail::format_bytes_exact(bytes),
                                     rmm::detail::format_bytes_exact(*options_.largest_request))};
  }
  auto const size = block_size(bytes);
  arena& own      = arena_for(stream.value());
  std::uint64_t to_record = 0;
  {
    std::lock_guard lock{own.mutex};
    if (auto range = own.free.take(size)) { return reinterpret_cast<void*>(range->start); }
    // A miss is a good moment to let other streams have this stream's recent frees.
    if (own.free_seq != own.claimed_seq) { to_record = own.claimed_seq = own.free_seq; }
  }
  if (to_record != 0) { record(own, to_record); }

  std::optional<memory_range> range = take_from(clean_, size);
  if (!range) { range = steal(own, size); }
  std::string upstream_error;
  if (!range) {
    try {
      range = grow(own, size);
    } catch (rmm::bad_alloc const& e) {
      upstream_error = e.what();
    }
  }
  if (!range) { range = reclaim_all_and_take(size); }
  if (!range) { throw_out_of_memory(bytes, stream, upstream_error); }
  if (range->size > size) { insert_free(own, {range->start + size, range->size - size}); }
  return reinterpret_cast<void*>(range->start);
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  if (ptr == nullptr) { return; }
  insert_free(arena_for(stream.value()), {reinterpret_cast<std::uintptr_t>(ptr), block_size(bytes)});
}

template <class FreeStore>
auto stream_ordered_suballocator<FreeStore>::arena_for(cudaStream_t stream) -> arena&
{
  auto& entry = thread_arena_cache().entries[arena_cache::slot(id_, stream)];
  if (entry.owner_id == id_ && entry.stream == stream) { return *static_cast<arena*>(entry.arena); }
  // cudaStreamPerThread is a different stream in every thread; the arena resource also gives each
  // thread its own arena on the default streams.
  bool const default_stream = stream == cudaStream_t{} || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
  bool const per_thread     = stream == cudaStreamPerThread || (options_.per_thread_default_arenas && default_stream);
  arena_key const key{stream, per_thread ? std::this_thread::get_id() : std::thread::id{}};
  arena* found = nullptr;
  {
    std::shared_lock lock{arenas_mutex_};
    if (auto it = arenas_.find(key); it != arenas_.end()) { found = it->second.get(); }
  }
  if (found == nullptr) { found = &create_arena(key); }
  entry = {id_, stream, found};
  return *found;
}

template <class FreeStore>
auto stream_ordered_suballocator<FreeStore>::create_arena(arena_key key) -> arena&
{
  std::unique_lock lock{arenas_mutex_};
  auto& slot = arenas_[key];
  if (!slot) {
    auto fresh                = std::make_unique<arena>(make_store_());
    fresh->stream             = key.stream;
    fresh->per_thread_default = key.stream == cudaStreamPerThread;
    cuda_set_device_raii const on_device{cuda_device_id{device_}};
    RMM_CUDA_TRY(cudaEventCreateWithFlags(&fresh->event, cudaEventDisableTiming));
    slot = std::move(fresh);
  }
  return *slot;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::refresh_chunks(arena& a)
{
  if (a.chunks_version == chunks_version_.load(std::memory_order_acquire)) { return; }
  std::lock_guard lock{chunks_mutex_};
  a.chunks         = chunk_starts_;
  a.chunks_version = chunks_version_.load(std::memory_order_relaxed);
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::insert_free(arena& a, memory_range range)
{
  std::uint64_t to_record = 0;
  {
    std::lock_guard lock{a.mutex};
    refresh_chunks(a);
    a.free.insert(range, *a.chunks, ++a.free_seq);
    if (a.free_seq - a.claimed_seq >= frees_per_record) { to_record = a.claimed_seq = a.free_seq; }
  }
  if (to_record != 0) { record(a, to_record); }
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::insert_clean(memory_range range)
{
  std::lock_guard lock{clean_.mutex};
  refresh_chunks(clean_);
  clean_.free.insert(range, *clean_.chunks, 0);
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::record(arena& a, std::uint64_t free_seq) noexcept
{
  // Called from an operation that was given a's stream, so the stream exists. The event is
  // recorded after the frees up to free_seq were made, so it covers them.
  if (auto const status = cudaEventRecord(a.event, a.stream); status != cudaSuccess) {
    rmm::detail::report_cuda_error_noexcept(status, "cudaEventRecord(arena event, stream)", __FILE__, __LINE__);
    return;
  }
  std::lock_guard lock{a.mutex};
  a.covered_seq = std::max(a.covered_seq, free_seq);
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::take_from(arena& a, std::size_t bytes)
{
  std::lock_guard lock{a.mutex};
  return a.free.take(bytes);
}

// ---- when the own arena is not enough -------------------------------------------------------------

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::steal(arena& thief, std::size_t bytes)
{
  std::shared_lock lock{arenas_mutex_};
  for (auto const& [key, victim] : arenas_) {
    if (victim.get() == &thief) { continue; }
    // Per-thread arenas of one legacy stream (the arena resource) need no event between them.
    bool const same_stream = victim->stream == thief.stream && !victim->per_thread_default;
    std::optional<memory_range> range;
    {
      std::lock_guard victim_lock{victim->mutex};
      range = same_stream ? victim->free.take(bytes) : victim->free.take_freed_before(bytes, victim->covered_seq);
    }
    if (!range) { continue; }
    if (!same_stream) {
      // The event was recorded after the block was freed: waiting on it orders our use after the
      // work that last used the block.
      if (auto const status = cudaStreamWaitEvent(thief.stream, victim->event, 0); status != cudaSuccess) {
        (void)cudaGetLastError();
        insert_free(*victim, *range);
        throw rmm::cuda_error{rmm::detail::cuda_error_message(status, "cudaStreamWaitEvent", __FILE__, __LINE__)};
      }
    }
    return range;
  }
  return std::nullopt;
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::grow(arena& requester, std::size_t bytes)
{
  std::lock_guard lock{growth_mutex_};
  if (auto range = take_from(clean_, bytes)) { return range; }  // reclaimed meanwhile
  if (options_.growth_step == 0) { return std::nullopt; }
  if (region_ != nullptr) { return grow_region(requester, bytes); }
  auto const reserved = reserved_bytes_.load(std::memory_order_relaxed);
  auto const room     = options_.maximum_size
                          ? (*options_.maximum_size > reserved ? *options_.maximum_size - reserved : 0)
                          : std::numeric_limits<std::size_t>::max();
  if (room < bytes) { return std::nullopt; }
  auto const preferred = std::min(std::max(bytes, block_size(options_.growth_step)), room);
  std::size_t size     = preferred;
  void* ptr{};
  try {
    ptr = upstream_.allocate(requester.stream, size);
  } catch (rmm::bad_alloc const&) {
    if (preferred == bytes) { throw; }
    size = bytes;  // the upstream may still have room for what was asked
    ptr  = upstream_.allocate(requester.stream, size);
  }
  add_chunk({reinterpret_cast<std::uintptr_t>(ptr), size, false});
  RMM_LOG_DEBUG("{}: grew by {} to {} for a request of {}",
                options_.name,
                rmm::detail::format_bytes(size),
                rmm::detail::format_bytes(reserved_bytes_.load()),
                rmm::detail::format_bytes(bytes));
  return memory_range{reinterpret_cast<std::uintptr_t>(ptr), size};
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::grow_region(arena& requester, std::size_t bytes)
{
  if constexpr (std::is_same_v<FreeStore, coalescing_free_list>) {
    // Extend the free block at the end of the region when the requester may use it at once (its
    // own, or clean), so only the difference is mapped.
    auto const end   = region_->end();
    std::size_t tail = 0;
    {
      std::lock_guard lock{requester.mutex};
      tail = requester.free.size_of_block_ending_at(end);
    }
    if (tail == 0) {
      std::optional<memory_range> clean_tail;
      {
        std::lock_guard lock{clean_.mutex};
        clean_tail = clean_.free.remove_block_ending_at(end);
      }
      if (clean_tail) {
        insert_free(requester, *clean_tail);
        tail = clean_tail->size;
      }
    }
    auto const need     = bytes > tail ? bytes - tail : 0;
    auto const reserved = reserved_bytes_.load(std::memory_order_relaxed);
    auto const room =
      std::min(region_->capacity() - region_->mapped_bytes(),
               options_.maximum_size ? (*options_.maximum_size > reserved ? *options_.maximum_size - reserved : 0)
                                     : std::numeric_limits<std::size_t>::max());
    auto const granule = region_->granularity();
    auto const minimum = align_up(need, granule);
    if (minimum > room) {
      throw rmm::out_of_memory{fmt::format("mapping {} more would exceed the pool's {} ({} mapped)",
                                           rmm::detail::format_bytes(minimum),
                                           options_.maximum_size ? "maximum size" : "address range (the device's memory)",
                                           rmm::detail::format_bytes(region_->mapped_bytes()))};
    }
    auto const preferred =
      std::min(std::max(minimum, align_up(options_.growth_step, granule)), align_down(room, granule));
    memory_range range{};
    try {
      range = region_->grow(preferred);
    } catch (rmm::bad_alloc const&) {
      if (preferred == minimum) { throw; }
      range = region_->grow(minimum);
    }
    auto const region_base = region_->end() - region_->mapped_bytes();
    add_chunk({range.start, range.size, range.start != region_base});
    RMM_LOG_DEBUG("{}: mapped {} more (now {}) for a request of {}",
                  options_.name,
                  rmm::detail::format_bytes(range.size),
                  rmm::detail::format_bytes(reserved_bytes_.load()),
                  rmm::detail::format_bytes(bytes));
    insert_free(requester, range);  // merges with the tail
    return take_from(requester, bytes);
  } else {
    (void)requester;
    (void)bytes;
    return std::nullopt;
  }
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::reclaim_all_and_take(std::size_t bytes)
{
  std::lock_guard lock{growth_mutex_};
  if (auto range = take_from(clean_, bytes)) { return range; }
  move_all_free_to_clean();
  return take_from(clean_, bytes);
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::move_all_free_to_clean()
{
  // Drain first, then synchronize: memory freed after the synchronization stays in its arena,
  // so everything moved has no pending work left on any stream.
  std::vector<memory_range> ranges;
  {
    std::shared_lock lock{arenas_mutex_};
    for (auto const& [key, a] : arenas_) {
      std::lock_guard arena_lock{a->mutex};
      a->free.drain([&](memory_range r) { ranges.push_back(r); });
    }
  }
  try {
    cuda_set_device_raii const on_device{cuda_device_id{device_}};
    RMM_CUDA_TRY(cudaDeviceSynchronize());
  } catch (...) {
    // Not synchronized, so not clean: the legacy default stream's arena is ordered after every
    // blocking stream.
    for (auto const& r : ranges) {
      insert_free(arena_for(cudaStream_t{}), r);
    }
    throw;
  }
  std::lock_guard lock{clean_.mutex};
  refresh_chunks(clean_);
  for (auto const& r : ranges) {
    clean_.free.insert(r, *clean_.chunks, 0);
  }
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::release()
{
  std::lock_guard lock{growth_mutex_};
  move_all_free_to_clean();
  return release_whole_chunks();
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::release_whole_chunks()
{
  if constexpr (std::is_same_v<FreeStore, coalescing_free_list>) {
    if (region_ != nullptr) {
      // Unmap the whole segments that the free block at the end of the region covers.
      auto const end = region_->end();
      std::lock_guard lock{clean_.mutex};
      auto const tail = clean_.free.remove_block_ending_at(end);
      if (!tail) { return 0; }
      auto const new_end = region_->shrink_to(tail->start);
      if (new_end > tail->start) { clean_.free.insert({tail->start, new_end - tail->start}, *clean_.chunks, 0); }
      std::vector<std::uintptr_t> gone;
      {
        std::lock_guard chunks_lock{chunks_mutex_};
        for (auto const& c : chunks_) {
          if (c.start >= new_end) { gone.push_back(c.start); }
        }
      }
      for (auto start : gone) {
        remove_chunk(start);
      }
      return end - new_end;
    }
  }
  std::vector<chunk> whole;
  {
    std::scoped_lock locks{clean_.mutex, chunks_mutex_};
    for (auto const& c : chunks_) {
      if (clean_.free.remove_exact({c.start, c.size})) { whole.push_back(c); }
    }
  }
  std::size_t released = 0;
  for (auto const& c : whole) {
    remove_chunk(c.start);
    upstream_.deallocate(cuda_stream_view{}, reinterpret_cast<void*>(c.start), c.size);
    released += c.size;
  }
  return released;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::add_chunk(chunk c)
{
  std::lock_guard lock{chunks_mutex_};
  auto it = std::lower_bound(
    chunks_.begin(), chunks_.end(), c.start, [](chunk const& x, std::uintptr_t s) { return x.start < s; });
  chunks_.insert(it, c);
  reserved_bytes_.fetch_add(c.size, std::memory_order_relaxed);
  publish_chunks();
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::remove_chunk(std::uintptr_t start)
{
  std::lock_guard lock{chunks_mutex_};
  auto it = std::find_if(chunks_.begin(), chunks_.end(), [start](chunk const& x) { return x.start == start; });
  if (it == chunks_.end()) { return; }
  reserved_bytes_.fetch_sub(it->size, std::memory_order_relaxed);
  chunks_.erase(it);
  publish_chunks();
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::publish_chunks()
{
  auto starts = std::make_shared<chunk_starts>();
  starts->reserve(chunks_.size());
  for (auto const& x : chunks_) {
    if (!x.joins_previous) { starts->push_back(x.start); }
  }
  chunk_starts_ = std::move(starts);
  chunks_version_.fetch_add(1, std::memory_order_release);
}

// ---- reporting ------------------------------------------------------------------------------------

template <class FreeStore>
suballocator_statistics stream_ordered_suballocator<FreeStore>::statistics() const
{
  suballocator_statistics stats{};
  auto const add = [&stats](arena const& a) {
    std::lock_guard lock{a.mutex};
    stats.free_bytes += a.free.free_bytes();
    stats.free_blocks += a.free.block_count();
    stats.largest_free_block = std::max(stats.largest_free_block, a.free.largest_block());
  };
  {
    std::shared_lock lock{arenas_mutex_};
    for (auto const& [key, a] : arenas_) {
      add(*a);
    }
  }
  add(clean_);
  {
    std::lock_guard lock{chunks_mutex_};
    stats.upstream_chunks = chunks_.size();
    stats.reserved_bytes  = reserved_bytes_.load(std::memory_order_relaxed);
  }
  stats.allocated_bytes = stats.reserved_bytes - std::min(stats.free_bytes, stats.reserved_bytes);
  return stats;
}

template <class FreeStore>
std::vector<std::vector<memory_range>> stream_ordered_suballocator<FreeStore>::free_ranges_by_owner() const
{
  std::vector<std::vector<memory_range>> owners;
  auto const collect = [&owners](arena const& a) {
    std::lock_guard lock{a.mutex};
    auto& ranges = owners.emplace_back();
    a.free.for_each([&ranges](memory_range r) { ranges.push_back(r); });
  };
  {
    std::shared_lock lock{arenas_mutex_};
    for (auto const& [key, a] : arenas_) {
      collect(*a);
    }
  }
  collect(clean_);
  return owners;
}

template <class FreeStore>
std::vector<memory_range> stream_ordered_suballocator<FreeStore>::upstream_chunks() const
{
  std::lock_guard lock{chunks_mutex_};
  std::vector<memory_range> result;
  for (auto const& c : chunks_) {
    result.push_back({c.start, c.size});
  }
  return result;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::log_state() const
{
  std::shared_lock lock{arenas_mutex_};
  for (auto const& [key, a] : arenas_) {
    std::lock_guard arena_lock{a->mutex};
    RMM_LOG_ERROR("{}: arena of stream {}: {} free in {} block(s), largest {}",
                  options_.name,
                  static_cast<void const*>(a->stream),
                  rmm::detail::format_bytes(a->free.free_bytes()),
                  a->free.block_count(),
                  rmm::detail::format_bytes(a->free.largest_block()));
  }
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::throw_out_of_memory(std::size_t bytes,
                                                                 cuda_stream_view stream,
                                                                 std::string const& upstream_error)
{
  if (options_.log_state_on_failure) { log_state(); }
  auto const s = statistics();
  auto message = fmt::format(
    "{} could not allocate {} on stream {}: it holds {} from upstream{}, of which {} is free in {} block(s); the "
    "largest free block is {} (fragmentation {:.1f}%)",
    options_.name,
    rmm::detail::format_bytes_exact(bytes),
    static_cast<void const*>(stream.value()),
    rmm::detail::format_bytes(s.reserved_bytes),
    options_.maximum_size ? fmt::format(" (maximum {})", rmm::detail::format_bytes(*options_.maximum_size))
                          : std::string{},
    rmm::detail::format_bytes(s.free_bytes),
    s.free_blocks,
    rmm::detail::format_bytes(s.largest_free_block),
    100.0 * s.fragmentation());
  if (!upstream_error.empty()) {
    message += "; growing failed: " + upstream_error;
  } else if (options_.growth_step == 0) {
    message += "; it does not grow";
  } else if (options_.maximum_size) {
    message += "; growing would exceed the maximum size";
  }
  throw rmm::out_of_memory{message};
}

}  // namespace rmm::mr::detail
