// SPDX-License-Identifier: Apache-2.0
#pragma once

// Template definitions of stream_ordered_suballocator: construction, the common path and
// reporting. stream_ordered_suballocator_arenas.hpp finds, scans and retires arenas, and
// stream_ordered_suballocator_growth.hpp grows, reclaims and releases. Each of the three includes
// the class declaration and neither of the other two; stream_ordered_suballocator.cpp includes all
// three and instantiates the engine once per FreeStore.

#include "../../detail/cuda_driver.hpp"
#include "../../detail/device_context_scope.hpp"
#include "stream_ordered_suballocator.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/before_growth.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace rmm::mr::detail {

/// An arena records its event once per this many frees: the cost of cudaEventRecord spread thin,
/// while recent frees still become available to other streams soon.
inline constexpr std::uint64_t frees_per_record = 32;

/// Keeps an arena from being retired while a call works on it without holding its lock.
template <class FreeStore>
class stream_ordered_suballocator<FreeStore>::pinned_arena {
 public:
  /// The caller holds a.mutex.
  explicit pinned_arena(arena& a) noexcept : arena_{&a} { ++a.pins; }
  ~pinned_arena()
  {
    std::lock_guard lock{arena_->mutex};
    --arena_->pins;
  }
  pinned_arena(pinned_arena const&)            = delete;
  pinned_arena& operator=(pinned_arena const&) = delete;

 private:
  arena* arena_;
};

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::arena_key_hash::operator()(arena_key const& key) const noexcept
{
  return static_cast<std::size_t>((key.stream_id * 0x9E3779B97F4A7C15ULL) ^ key.thread);
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::max_request() const noexcept
{
  auto const g = options_.granularity;
  if ((g & (g - 1)) == 0) [[likely]] { return align_down(std::numeric_limits<std::size_t>::max(), g); }
  return std::numeric_limits<std::size_t>::max() / g * g;  // fixed_size blocks: any multiple of 256
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::block_size(std::size_t bytes) const noexcept
{
  // Every allocation and free asks: a mask where the granularity allows it, not a division.
  auto const g = options_.granularity;
  if ((g & (g - 1)) == 0) [[likely]] { return align_up(bytes, g); }
  return (bytes + g - 1) / g * g;
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
  if (options_.initial_size > std::min(max_request(), rmm::mr::max_allocation_size)) {
    throw rmm::out_of_memory{fmt::format("{}: an initial size of {} can never be allocated; use a smaller one",
                                         options_.name, rmm::format_bytes_exact(options_.initial_size))};
  }
  auto const initial = block_size(options_.initial_size);
  if (options_.maximum_size) {
    RMM_EXPECTS(initial <= *options_.maximum_size,
                fmt::format("{}: the initial size {} exceeds the maximum size {}", options_.name,
                            rmm::format_bytes_exact(initial), rmm::format_bytes_exact(*options_.maximum_size)));
  }
  if constexpr (coalescing) {  // a region relies on free memory merging across growth steps
    if (options_.expandable) {
      region_ = expandable_region::create(device_, options_.maximum_size.value_or(available_device_memory().second),
                                          options_.maximum_size.has_value(), options_.remap_free_granules);
    }
  }
  RMM_EXPECTS(region_ != nullptr || !options_.require_expandable,
              fmt::format("{}: growth through virtual memory was asked for, but device {} cannot do it (no virtual "
                          "memory management, or a maximum size below one mapping granule); grow from the upstream "
                          "instead",
                          options_.name, device_));
  if (region_ != nullptr && align_up(initial, region_->granularity()) > region_->capacity()) {
    // The initial size does not fit the whole granules the maximum holds: grow from the upstream.
    RMM_EXPECTS(
      !options_.require_expandable,
      fmt::format("{}: growth through virtual memory was asked for, but the initial size {} rounded up to "
                  "the device's mapping granularity ({}) exceeds the maximum size {}",
                  options_.name, rmm::format_bytes_exact(initial), rmm::format_bytes_exact(region_->granularity()),
                  rmm::format_bytes_exact(*options_.maximum_size)));
    region_.reset();
  }
  if (region_ != nullptr && initial > 0) {
    auto const range = region_->grow(initial);
    remapping_.mapped(range.size);
    add_chunk(range, true);
    insert_clean(range);
  } else if (initial > 0) {
    void* ptr{};
    try {
      ptr = upstream_.allocate(cuda_stream_view{}, initial, rmm::CUDA_ALLOCATION_ALIGNMENT);
      RMM_CU_TRY(cuStreamSynchronize(cuda_stream_view{}.value()));  // no pending work: the reserve is clean
    } catch (...) {
      if (ptr != nullptr) { upstream_.deallocate(cuda_stream_view{}, ptr, initial, rmm::CUDA_ALLOCATION_ALIGNMENT); }
      throw;
    }
    add_chunk({reinterpret_cast<std::uintptr_t>(ptr), initial}, false);
    insert_clean({reinterpret_cast<std::uintptr_t>(ptr), initial});
  }
}

template <class FreeStore>
stream_ordered_suballocator<FreeStore>::~stream_ordered_suballocator()
{
  if (region_ == nullptr) {  // the region unmaps its own memory
    for (auto const& c : chunks_) {
      upstream_.deallocate(cuda_stream_view{}, reinterpret_cast<void*>(c.start), c.size,
                           rmm::CUDA_ALLOCATION_ALIGNMENT);
    }
  }
  for (auto const& a : all_arenas_) {
    if (a->event != nullptr) { RMM_CU_ASSERT_SUCCESS(cuEventDestroy_v2(a->event)); }
  }
}

// ---- the common path ------------------------------------------------------------------------------

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::check_request(std::size_t bytes) const
{
  if (bytes > max_request()) [[unlikely]] {
    // Checked before any rounding: a wrapped size would be a small block handed out as a huge one.
    throw rmm::out_of_memory{fmt::format("{} cannot allocate {}: no device has that much memory", options_.name,
                                         rmm::format_bytes_exact(bytes))};
  }
  if (options_.largest_request && bytes > *options_.largest_request) [[unlikely]] {
    throw rmm::bad_alloc{fmt::format("{} cannot allocate {}: its blocks are {}", options_.name,
                                     rmm::format_bytes_exact(bytes),
                                     rmm::format_bytes_exact(*options_.largest_request))};
  }
}

template <class FreeStore>
void* stream_ordered_suballocator<FreeStore>::allocate(std::size_t bytes, cuda_stream_view stream)
{
  if (bytes == 0) { return nullptr; }
  check_request(bytes);
  auto const size = block_size(bytes);
  auto const key  = key_for(stream.value(), size);
  arena* own      = nullptr;
  std::optional<pinned_arena> pin;
  {
    auto lock            = lock_arena(key, own);
    own->used_since_scan = true;
    if (auto range = own->free.take_recent(size)) { return reinterpret_cast<void*>(range->start); }
    if (auto range = own->free.take(size, current_chunks(*own))) { return reinterpret_cast<void*>(range->start); }
    pin.emplace(*own);
  }

  std::optional<memory_range> range = take_clean(*own, stream.value(), size);
  harvest_result scan{};
  if (!range) {
    // Memory is short: a good moment to let other streams have this stream's recent frees (not
    // at every miss, which would cost an event record where the clean reserve serves anyway).
    std::uint64_t to_record = 0;
    {
      std::lock_guard lock{own->mutex};
      if (own->free_seq != own->claimed_seq) {
        to_record = own->claimed_seq = own->free_seq;
        ++own->pins;  // record() unpins
      }
    }
    if (to_record != 0) { record(*own, to_record, stream.value()); }
    scan  = harvest(own);
    range = take_clean(*own, stream.value(), size);
  }
  if (!range) { range = steal(*own, stream.value(), size); }
  if (!range) { range = take_after_hook(own, size); }
  if (!range && should_synchronize_before_growing(scan, size)) { range = reclaim_all_and_take(size); }
  std::string upstream_error;
  if (!range) {
    try {
      range = grow(*own, stream.value(), size);
    } catch (rmm::bad_alloc const& e) {
      upstream_error = e.reason();
    }
  }
  if (!range) { range = reclaim_all_and_take(size); }
  if (!range) { throw_out_of_memory(bytes, stream, upstream_error); }
  // Only growth hands back more than was asked: the rest is new memory, clean for every stream, so
  // threads growing at once share one step instead of each taking its own.
  if (range->size > size) { insert_clean({range->start + size, range->size - size}); }
  return reinterpret_cast<void*>(range->start);
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  if (ptr == nullptr) { return; }
  if (bytes > max_request()) [[unlikely]] {
    try {
      RMM_LOG_ERROR("{}: ignored the free of {} with an impossible size ({}): it was never allocated with that size",
                    options_.name, ptr, bytes);
    } catch (...) {
    }
    return;
  }
  memory_range const range{reinterpret_cast<std::uintptr_t>(ptr), block_size(bytes)};
  try {
    auto const key          = key_for(stream.value(), range.size);
    arena* a                = nullptr;
    std::uint64_t to_record = 0;
    {
      auto lock = lock_arena(key, a);
      to_record = insert_locked(*a, range, stream.value());
    }
    if (to_record != 0) { record(*a, to_record, stream.value()); }
  } catch (...) {
    // The stream is unknown to the driver (destroyed), or the bookkeeping ran out of host memory.
    deallocate_after_device_sync(range, stream.value());
  }
}

template <class FreeStore>
void* stream_ordered_suballocator<FreeStore>::allocate_sync(std::size_t bytes)
{
  if (bytes == 0) { return nullptr; }
  check_request(bytes);
  if (!synchronous_use_.load(std::memory_order_relaxed)) { synchronous_use_.store(true, std::memory_order_relaxed); }
  auto const size                   = block_size(bytes);
  std::optional<memory_range> range = take_from(clean_, size);
  harvest_result scan{};
  if (!range) {
    scan  = harvest(nullptr);
    range = take_from(clean_, size);
  }
  if (!range) { range = take_after_host_wait(size); }
  if (!range) { range = take_after_hook(nullptr, size); }
  if (!range && should_synchronize_before_growing(scan, size)) { range = reclaim_all_and_take(size); }
  std::string upstream_error;
  if (!range) {
    try {
      range = grow(clean_, cudaStreamLegacy, size);
    } catch (rmm::bad_alloc const& e) {
      upstream_error = e.reason();
    }
  }
  if (!range) { range = reclaim_all_and_take(size); }
  if (!range) { throw_out_of_memory(bytes, cuda_stream_view{}, upstream_error); }
  if (range->size > size) { insert_clean({range->start + size, range->size - size}); }
  return reinterpret_cast<void*>(range->start);
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::deallocate_sync(void* ptr, std::size_t bytes) noexcept
{
  if (ptr == nullptr) { return; }
  if (bytes > max_request()) [[unlikely]] {
    try {
      RMM_LOG_ERROR("{}: ignored the free of {} with an impossible size ({})", options_.name, ptr, bytes);
    } catch (...) {
    }
    return;
  }
  try {
    insert_clean({reinterpret_cast<std::uintptr_t>(ptr), block_size(bytes)});
  } catch (...) {
    try {
      RMM_LOG_ERROR("{}: lost {} at {}: out of host memory to keep track of it", options_.name,
                    rmm::format_bytes_exact(bytes), ptr);
    } catch (...) {
    }
  }
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::take_after_hook(arena* requester, std::size_t bytes)
{
  // Each call may give back only part of what it holds (the oldest first): ask again until the
  // request fits or nothing more comes back. The hook may give memory back in the requester's
  // stream order (its arena) or as clean memory.
  while (rmm::mr::detail::call_before_growth(cuda_device_id{device_}, bytes)) {
    if (requester != nullptr) {
      if (auto range = take_from(*requester, bytes)) { return range; }
    }
    if (auto range = take_from(clean_, bytes)) { return range; }
  }
  return std::nullopt;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::deallocate_after_device_sync(memory_range range,
                                                                          cudaStream_t stream) noexcept
{
  try {
    RMM_LOG_WARN("{}: freeing {} on stream {} needed a device synchronization: the stream has no arena", options_.name,
                 reinterpret_cast<void*>(range.start), static_cast<void*>(stream));
    {
      cuda_set_device_raii const on_device{cuda_device_id{device_}};
      RMM_CU_TRY(cuCtxSynchronize());
    }
    insert_clean(range);
  } catch (std::exception const& e) {
    try {
      RMM_LOG_ERROR("{}: lost {} at {}: it could not be taken back ({})", options_.name,
                    rmm::format_bytes_exact(range.size), reinterpret_cast<void*>(range.start), e.what());
    } catch (...) {
    }
  }
}

template <class FreeStore>
chunk_starts const& stream_ordered_suballocator<FreeStore>::current_chunks(arena& a) const
{
  if (a.chunks_version != chunks_version_.load(std::memory_order_acquire)) {
    std::lock_guard lock{chunks_mutex_};
    a.chunks         = chunk_starts_;
    a.chunks_version = chunks_version_.load(std::memory_order_relaxed);
  }
  return *a.chunks;
}

template <class FreeStore>
std::uint64_t stream_ordered_suballocator<FreeStore>::insert_locked(arena& a, memory_range range, cudaStream_t stream)
{
  a.used_since_scan = true;
  if (!a.free.insert_recent(range, current_chunks(a), a.free_seq + 1)) [[unlikely]] {
    try {
      RMM_LOG_ERROR(
        "{}: {} ({} bytes) freed on stream {} is free already: a double free, or a free with the wrong size; ignored",
        options_.name, reinterpret_cast<void*>(range.start), range.size, static_cast<void*>(stream));
    } catch (...) {
    }
    return 0;
  }
  ++a.free_seq;
  if (a.free_seq - a.claimed_seq >= frees_per_record) {
    a.claimed_seq = a.free_seq;
    ++a.pins;  // record() unpins
    return a.free_seq;
  }
  return 0;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::insert_free(arena& a, memory_range range, cudaStream_t stream)
{
  std::uint64_t to_record = 0;
  {
    std::lock_guard lock{a.mutex};
    to_record = insert_locked(a, range, stream);
  }
  if (to_record != 0) { record(a, to_record, stream); }
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::insert_clean(memory_range range)
{
  std::lock_guard lock{clean_.mutex};
  if (!clean_.free.insert(range, current_chunks(clean_), 0)) [[unlikely]] {
    RMM_LOG_ERROR("{}: {} ({} bytes) is free already; ignored", options_.name, reinterpret_cast<void*>(range.start),
                  range.size);
  }
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::record(arena& a, std::uint64_t free_seq, cudaStream_t stream) noexcept
{
  // Called from an operation that was given a's stream, so the stream exists. The event is
  // recorded after the frees up to free_seq were made, so it covers them.
  cudaEvent_t event{};
  {
    std::lock_guard lock{a.mutex};
    event = a.event;
  }
  if (event == nullptr) {
    // Created in the pool's device's context: a thread that never called the runtime has none.
    rmm::detail::device_context_scope const on_device{device_};
    cudaEvent_t created{};
    if (auto const status = rmm::detail::cuda_driver_table().cuEventCreate(&created, CU_EVENT_DISABLE_TIMING);
        status != CUDA_SUCCESS) {
      rmm::detail::report_cu_error_noexcept(status, "cuEventCreate(arena event)", __FILE__, __LINE__);
      std::lock_guard lock{a.mutex};
      --a.pins;
      return;
    }
    std::lock_guard lock{a.mutex};
    if (a.event == nullptr) {
      a.event = created;
    } else {
      RMM_CU_ASSERT_SUCCESS(cuEventDestroy_v2(created));  // another thread created one meanwhile
    }
    event = a.event;
  }
  auto const status = rmm::detail::cuda_driver_table().cuEventRecord(event, stream);
  if (status != CUDA_SUCCESS) {
    rmm::detail::report_cu_error_noexcept(status, "cuEventRecord(arena event, stream)", __FILE__, __LINE__);
  }
  std::lock_guard lock{a.mutex};
  if (status == CUDA_SUCCESS) { a.covered_seq = std::max(a.covered_seq, free_seq); }
  --a.pins;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::merge_recent_frees(arena& a) const
{
  // Logically const: the arena holds the same free memory, merged as it would have been at once.
  a.free.spill(current_chunks(a));
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::take_from(arena& a, std::size_t bytes)
{
  std::lock_guard lock{a.mutex};
  return a.free.take(bytes, current_chunks(a));
}

// ---- reporting ------------------------------------------------------------------------------------

template <class FreeStore>
suballocator_statistics stream_ordered_suballocator<FreeStore>::statistics() const
{
  suballocator_statistics stats{};
  auto const add = [&stats](arena const& a) {  // caller holds a.mutex
    stats.free_bytes += a.free.free_bytes();
    stats.free_blocks += a.free.block_count();
    stats.largest_free_block = std::max(stats.largest_free_block, a.free.largest_block());
  };
  {
    std::shared_lock lock{arenas_mutex_};
    for (auto const& [key, a] : arenas_) {
      std::lock_guard arena_lock{a->mutex};
      merge_recent_frees(*a);
      add(*a);
    }
    stats.stream_arenas = arenas_.size();
  }
  {
    std::lock_guard lock{clean_.mutex};
    add(clean_);
  }
  {
    std::lock_guard lock{chunks_mutex_};
    stats.upstream_chunks = chunks_.size();
    stats.reserved_bytes  = reserved_bytes_.load(std::memory_order_relaxed);
  }
  stats.peak_reserved_bytes = std::max(peak_reserved_bytes_.load(std::memory_order_relaxed), stats.reserved_bytes);
  stats.allocated_bytes     = stats.reserved_bytes - std::min(stats.free_bytes, stats.reserved_bytes);
  stats.moved_bytes         = remapping_.moved_bytes();
  return stats;
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::arena_count() const
{
  std::shared_lock lock{arenas_mutex_};
  return arenas_.size();
}

template <class FreeStore>
std::vector<std::vector<memory_range>> stream_ordered_suballocator<FreeStore>::free_ranges_by_owner() const
{
  std::vector<std::vector<memory_range>> owners;
  auto const collect = [&owners](arena const& a) {  // caller holds a.mutex
    auto& ranges = owners.emplace_back();
    a.free.for_each([&ranges](memory_range r) { ranges.push_back(r); });
  };
  {
    std::shared_lock lock{arenas_mutex_};
    for (auto const& [key, a] : arenas_) {
      std::lock_guard arena_lock{a->mutex};
      merge_recent_frees(*a);
      collect(*a);
    }
  }
  {
    std::lock_guard lock{clean_.mutex};
    collect(clean_);
  }
  return owners;
}

template <class FreeStore>
std::vector<memory_range> stream_ordered_suballocator<FreeStore>::upstream_chunks() const
{
  std::lock_guard lock{chunks_mutex_};
  std::vector<memory_range> result;
  for (auto const& c : chunks_) { result.push_back({c.start, c.size}); }
  return result;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::log_state() const
{
  std::shared_lock lock{arenas_mutex_};
  for (auto const& [key, a] : arenas_) {
    std::lock_guard arena_lock{a->mutex};
    RMM_LOG_ERROR("{}: arena of stream id {}{}: {} free in {} block(s), largest {}", options_.name, key.stream_id,
                  key.thread != 0 ? fmt::format(" (thread {})", key.thread) : std::string{},
                  rmm::format_bytes(a->free.free_bytes()), a->free.block_count(),
                  rmm::format_bytes(a->free.largest_block()));
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
    options_.name, rmm::format_bytes_exact(bytes), static_cast<void const*>(stream.value()),
    rmm::format_bytes(s.reserved_bytes),
    options_.maximum_size ? fmt::format(" (maximum {})", rmm::format_bytes(*options_.maximum_size)) : std::string{},
    rmm::format_bytes(s.free_bytes), s.free_blocks, rmm::format_bytes(s.largest_free_block), 100.0 * s.fragmentation());
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
