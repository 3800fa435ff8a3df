// SPDX-License-Identifier: Apache-2.0
#pragma once

// stream_ordered_suballocator: growing from upstream, reclaiming all free memory behind one device
// synchronization, and giving memory back. Included by stream_ordered_suballocator.cpp, which
// instantiates it.

#include "../../detail/cuda_driver.hpp"
#include "../../detail/device_context_scope.hpp"
#include "stream_ordered_suballocator.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/device_synchronization.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

namespace rmm::mr::detail {

template <class FreeStore>
bool stream_ordered_suballocator<FreeStore>::should_synchronize_before_growing(harvest_result const& scan,
                                                                               std::size_t bytes) const
{
  if (scan.arenas > arenas_before_reclaim) { return true; }
  // Memory free in other streams' arenas is usable here only behind their work. Once it is at
  // least a growth step's worth (a sixteenth of the pool), one synchronization makes it clean
  // instead: growing past it each time let 16 threads on random streams reserve about twice their
  // peak use, and a sync is due only after that much more was freed on other streams again.
  auto const reserved = reserved_bytes_.load(std::memory_order_relaxed);
  return scan.stranded_bytes >= bytes && scan.stranded_bytes >= reserved / 16;
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::grow(arena& requester,
                                                                         cudaStream_t stream,
                                                                         std::size_t bytes)
{
  std::lock_guard lock{growth_mutex_};
  return grow_locked(requester, stream, bytes);
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::grow_locked(arena& requester,
                                                                                cudaStream_t stream,
                                                                                std::size_t bytes)
{
  if (auto range = take_from(clean_, bytes)) { return range; }  // reclaimed meanwhile
  if (options_.growth_step == 0) { return std::nullopt; }
  if (region_ != nullptr) { return grow_region(requester, stream, bytes); }
  auto const reserved = reserved_bytes_.load(std::memory_order_relaxed);
  auto const room = options_.maximum_size ? (*options_.maximum_size > reserved ? *options_.maximum_size - reserved : 0)
                                          : std::numeric_limits<std::size_t>::max();
  if (room < bytes) { return std::nullopt; }
  auto const preferred = std::min(std::max(bytes, block_size(options_.growth_step)), room);
  std::size_t size     = preferred;
  // For the clean reserve (a caller without a stream) the memory must have no pending work.
  bool const for_clean = &requester == &clean_;
  auto const take      = [&](std::size_t n) {
    return for_clean ? upstream_.allocate_sync(n, rmm::CUDA_ALLOCATION_ALIGNMENT)
                          : upstream_.allocate(stream, n, rmm::CUDA_ALLOCATION_ALIGNMENT);
  };
  void* ptr{};
  try {
    ptr = take(size);
  } catch (rmm::bad_alloc const&) {
    if (preferred == bytes) { throw; }
    size = bytes;  // the upstream may still have room for what was asked
    ptr  = take(size);
  }
  add_chunk({reinterpret_cast<std::uintptr_t>(ptr), size}, false);
  RMM_LOG_DEBUG("{}: grew by {} to {} for a request of {}", options_.name, rmm::format_bytes(size),
                rmm::format_bytes(reserved_bytes_.load()), rmm::format_bytes(bytes));
  return memory_range{reinterpret_cast<std::uintptr_t>(ptr), size};
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::grow_region(arena& requester,
                                                                                cudaStream_t stream,
                                                                                std::size_t bytes)
{
  // Growth extends the free block at the end of the region when the requester may use it at once
  // (its own, or clean), so only the difference is mapped. Fresh mappings have no pending work.
  // That block is shared: another thread allocating on the same stream (or from the clean reserve)
  // may take it before this one does. Then that thread was served, and this one grows again.
  constexpr int rounds = 8;
  for (int round = 0; round < rounds; ++round) {
    auto tail = extend_tail_block(requester, stream, bytes);
    std::optional<memory_range> in_hole;
    if (tail.missing > 0) { in_hole = map_new_memory(requester, stream, bytes, tail); }
    auto taken = in_hole ? in_hole : take_from(requester, bytes);
    if (&requester != &clean_ && tail.new_from) { place_rest(requester, *tail.new_from); }
    if (taken) { return taken; }
    RMM_LOG_DEBUG("{}: another thread took the memory grown for a request of {}; growing again", options_.name,
                  rmm::format_bytes(bytes));
  }
  return std::nullopt;
}

template <class FreeStore>
auto stream_ordered_suballocator<FreeStore>::extend_tail_block(arena& requester, cudaStream_t stream, std::size_t bytes)
  -> region_tail
{
  if constexpr (coalescing) {
    auto const tail_size = [&] {
      std::lock_guard lock{requester.mutex};
      return requester.free.size_of_block_ending_at(region_->end(), current_chunks(requester));
    };
    auto tail = tail_size();
    if (tail == 0 && &requester != &clean_) {
      // The clean reserve's block at the end is the requester's to use at once: it becomes its tail.
      std::optional<memory_range> clean_tail;
      {
        std::lock_guard lock{clean_.mutex};
        clean_tail = clean_.free.remove_block_ending_at(region_->end(), current_chunks(clean_));
      }
      if (clean_tail) {
        insert_free(requester, *clean_tail, stream);
        tail = tail_size();  // merged with the requester's block before it
      }
    }
    region_tail result{bytes > tail ? bytes - tail : 0, std::nullopt};
    if (result.missing == 0) { return result; }
    // Idle free granules in the middle move to the end before any new memory is mapped: the pool
    // then holds no more device memory than its fragmentation forces on the address range.
    if (auto moved = recycle_idle_granules(requester, stream, align_up(result.missing, region_->granularity()))) {
      result.new_from = moved->start;
      place_at_end(requester, *moved, stream);
      tail           = tail_size();
      result.missing = bytes > tail ? bytes - tail : 0;
      RMM_LOG_DEBUG("{}: moved {} of free memory to the end instead of mapping more, for a request of {}",
                    options_.name, rmm::format_bytes(moved->size), rmm::format_bytes(bytes));
    }
    return result;
  } else {
    return region_tail{bytes, std::nullopt};  // never called: only coalescing stores get a region
  }
}

template <class FreeStore>
auto stream_ordered_suballocator<FreeStore>::plan_mapping(std::size_t bytes, std::size_t missing) const
  -> region_mapping
{
  // New memory goes at the end, extending the tail, while the addresses there allow; once they
  // are used up, into a hole, where it must hold the whole request by itself.
  auto const granule  = region_->granularity();
  auto const reserved = reserved_bytes_.load(std::memory_order_relaxed);
  auto const room =
    std::min(region_->capacity() - region_->mapped_bytes(),
             options_.maximum_size ? (*options_.maximum_size > reserved ? *options_.maximum_size - reserved : 0)
                                   : std::numeric_limits<std::size_t>::max());
  auto const end_room = align_down(region_->recyclable_bytes(), granule);
  region_mapping mapping{};
  mapping.at_end  = align_up(missing, granule) <= end_room;
  mapping.minimum = align_up(mapping.at_end ? missing : bytes, granule);
  if (mapping.minimum > room) {
    throw rmm::out_of_memory{fmt::format("mapping {} more would exceed the pool's {} ({} mapped)",
                                         rmm::format_bytes(mapping.minimum),
                                         options_.maximum_size ? "maximum size" : "address range (the device's memory)",
                                         rmm::format_bytes(region_->mapped_bytes()))};
  }
  // Small steps cost little here (free memory coalesces across them), so a pool grows by a
  // sixteenth of its size, at most the growth step: a fixed 32 MiB would be most of what a pool
  // that peaks at a few hundred MiB holds beyond its use. Smaller steps (a thirty-second, a
  // sixty-fourth, or exactly what a small request lacks) move later blocks into other holes more
  // than they save at the end: replaying three logs of one ViT program under the shim, they came
  // out from 0 to 3.7% above this step's peak, which was the same for all three.
  auto const step =
    std::max(granule, std::min(align_up(options_.growth_step, granule), align_up(reserved / 16, granule)));
  mapping.preferred = std::min(std::max(mapping.minimum, step), align_down(room, granule));
  // At the end, a larger step would land in a hole.
  if (mapping.at_end) { mapping.preferred = std::min(mapping.preferred, end_room); }
  return mapping;
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::map_new_memory(arena& requester,
                                                                                   cudaStream_t stream,
                                                                                   std::size_t bytes,
                                                                                   region_tail& tail)
{
  auto const mapping = plan_mapping(bytes, tail.missing);
  memory_range range{};
  try {
    range = region_->grow(mapping.preferred);
  } catch (rmm::bad_alloc const&) {
    if (mapping.preferred == mapping.minimum) { throw; }
    range = region_->grow(mapping.minimum);
  }
  remapping_.mapped(range.size);
  add_chunk(range, true);
  RMM_LOG_DEBUG("{}: mapped {} more (now {}) for a request of {}", options_.name, rmm::format_bytes(range.size),
                rmm::format_bytes(reserved_bytes_.load()), rmm::format_bytes(bytes));
  if (!mapping.at_end) { return range; }  // in a hole: the caller keeps what it needs; the rest is clean
  if (!tail.new_from) { tail.new_from = range.start; }
  place_at_end(requester, range, stream);
  return std::nullopt;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::place_rest(arena& requester, std::uintptr_t new_from)
{
  if constexpr (coalescing) {
    // What is left at the end of the region is new memory (when it does not reach back into the
    // requester's old tail): clean for every stream.
    std::optional<memory_range> rest;
    {
      std::lock_guard lock{requester.mutex};
      auto const& chunks = current_chunks(requester);
      if (requester.free.size_of_block_ending_at(region_->end(), chunks) <= region_->end() - new_from) {
        rest = requester.free.remove_block_ending_at(region_->end(), chunks);
      }
    }
    if (rest) { insert_clean(*rest); }
  }
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::place_at_end(arena& requester, memory_range range, cudaStream_t stream)
{
  if (&requester == &clean_) {
    insert_clean(range);  // merges with the tail
  } else {
    insert_free(requester, range, stream);
  }
}

template <class FreeStore>
std::vector<std::uintptr_t> stream_ordered_suballocator<FreeStore>::take_idle_granules(arena& requester,
                                                                                       cudaStream_t stream,
                                                                                       std::size_t bytes)
{
  if constexpr (coalescing) {
    auto const granule = region_->granularity();
    auto const end     = region_->end();
    auto const movable = [this](std::uintptr_t g) { return region_->movable(g); };
    std::vector<std::uintptr_t> granules;
    granules.reserve(bytes / granule);  // the sink below must not throw mid-way
    auto const collect = [&](arena& a, std::uint64_t max_seq) {
      std::lock_guard lock{a.mutex};
      a.free.take_whole_granules(granule, bytes - granules.size() * granule, end, max_seq, current_chunks(a), movable,
                                 [&granules](std::uintptr_t g) { granules.push_back(g); });
    };
    collect(clean_, std::numeric_limits<std::uint64_t>::max());  // no pending work at all
    if (&requester != &clean_) {
      // The requester's blocks taken from the reserve whole and never freed (sequence 0) ...
      if (granules.size() * granule < bytes) { collect(requester, 0); }
      // ... and those it freed itself, once its work on them is done: the host waits for the
      // event this miss recorded on the stream, where that frees granules, rather than the pool
      // taking more of the device; never during a capture of the stream, when the record was only
      // captured. Read what the event covers before asking.
      std::uint64_t covered = 0;
      cudaEvent_t event{};
      if (granules.size() * granule < bytes) {
        std::lock_guard lock{requester.mutex};
        if (requester.free.whole_granule_bytes(granule, end, requester.covered_seq, current_chunks(requester),
                                               movable) > 0) {
          covered = requester.covered_seq;
          event   = requester.event;
        }
      }
      auto const& cu = rmm::detail::cuda_driver_table();
      CUstreamCaptureStatus capture{CU_STREAM_CAPTURE_STATUS_NONE};
      if (event != nullptr && cu.cuStreamIsCapturing(stream, &capture) == CUDA_SUCCESS &&
          capture == CU_STREAM_CAPTURE_STATUS_NONE &&
          (cu.cuEventQuery(event) == CUDA_SUCCESS || cu.cuEventSynchronize(event) == CUDA_SUCCESS)) {
        collect(requester, covered);
      }
    }
    std::sort(granules.begin(), granules.end());
    return granules;
  } else {  // explicit instantiations compile this for every store
    (void)requester;
    (void)stream;
    (void)bytes;
    return {};
  }
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::settle_recycled(std::vector<std::uintptr_t> const& granules,
                                                             expandable_region::recycled const& result)
{
  if constexpr (coalescing) {
    auto const granule = region_->granularity();
    // Granules that stayed are idle: clean, where they merge with their neighbours again.
    for (auto const g : result.stayed) { insert_clean({g, granule}); }
    if (!result.lost.empty()) {
      RMM_LOG_ERROR("{}: gave {} back to the device: moving it failed and it could not be mapped where it was",
                    options_.name, rmm::format_bytes(result.lost.size() * granule));
    }
    // What left a place leaves a hole there; consecutive granules one hole.
    std::vector<std::uintptr_t> gone;
    gone.reserve(granules.size());
    std::set_difference(granules.begin(), granules.end(), result.stayed.begin(), result.stayed.end(),
                        std::back_inserter(gone));
    for (std::size_t i = 0; i < gone.size();) {
      auto j = i + 1;
      while (j < gone.size() && gone[j] == gone[j - 1] + granule) { ++j; }
      remove_chunks({gone[i], (j - i) * granule});
      i = j;
    }
  } else {
    (void)granules;
    (void)result;
  }
}

template <class FreeStore>
std::optional<memory_range> stream_ordered_suballocator<FreeStore>::recycle_idle_granules(arena& requester,
                                                                                          cudaStream_t stream,
                                                                                          std::size_t bytes)
{
  if constexpr (coalescing) {
    if (!options_.remap_free_granules) { return std::nullopt; }
    auto const granule = region_->granularity();
    bytes = std::min({bytes, align_down(region_->recyclable_bytes(), granule), align_down(remapping_.left(), granule)});
    if (bytes == 0) { return std::nullopt; }
    auto const granules = take_idle_granules(requester, stream, bytes);
    if (granules.empty()) { return std::nullopt; }
    expandable_region::recycled result;
    try {
      result = region_->recycle(granules);
    } catch (std::exception const& e) {  // out of host memory before anything moved
      result.stayed = granules;
      RMM_LOG_WARN("{}: could not move free granules ({}); mapping new memory instead", options_.name, e.what());
    }
    settle_recycled(granules, result);
    remapping_.moved(result.moved.size);
    if (result.moved.size == 0) { return std::nullopt; }
    add_chunk(result.moved, true);
    return result.moved;
  } else {
    (void)requester;
    (void)stream;
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
  if (auto range = take_from(clean_, bytes)) { return range; }
  if (release_free_allocations(bytes) == 0) { return std::nullopt; }
  try {
    auto range = grow_locked(clean_, cudaStreamLegacy, bytes);
    if (range) {
      RMM_LOG_DEBUG("{}: served {} after giving free memory back", options_.name, rmm::format_bytes(bytes));
    }
    return range;
  } catch (rmm::bad_alloc const& e) {
    RMM_LOG_DEBUG("{}: {} could not be mapped even so: {}", options_.name, rmm::format_bytes(bytes), e.what());
    return std::nullopt;
  }
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::release_free_allocations(std::size_t bytes)
{
  if (region_ == nullptr) { return 0; }
  std::vector<memory_range> released;
  {
    std::lock_guard lock{clean_.mutex};
    auto const& chunks = current_chunks(clean_);
    clean_.free.spill(chunks);  // every free block merged, as for_each then lists it
    std::vector<std::pair<memory_range, std::vector<memory_range>>> releasable;
    std::size_t releasable_bytes = 0;
    clean_.free.for_each([&](memory_range block) {
      auto inside = region_->allocations_within(block);
      for (auto const& r : inside) { releasable_bytes += r.size; }
      if (!inside.empty()) { releasable.emplace_back(block, std::move(inside)); }
    });
    // Only when the request would then fit on the device: a request no device could serve leaves
    // the pool as it is.
    std::size_t free_on_device = 0;
    std::size_t total          = 0;
    {
      rmm::detail::device_context_scope const on_device{device_};
      if (rmm::detail::cuda_driver_table().cuMemGetInfo_v2(&free_on_device, &total) != CUDA_SUCCESS) { return 0; }
    }
    if (releasable_bytes == 0 || free_on_device + releasable_bytes < align_up(bytes, region_->granularity())) {
      return 0;
    }
    for (auto const& [block, inside] : releasable) {
      // The block leaves the free list; what lies around the allocations goes back.
      if (!clean_.free.remove_exact(block, chunks)) { continue; }
      auto cursor = block.start;
      for (auto const& r : inside) {
        if (r.start > cursor) { (void)clean_.free.insert({cursor, r.start - cursor}, chunks, 0); }
        cursor = r.start + r.size;
      }
      if (block.start + block.size > cursor) {
        (void)clean_.free.insert({cursor, block.start + block.size - cursor}, chunks, 0);
      }
      released.insert(released.end(), inside.begin(), inside.end());
    }
  }
  if (released.empty()) { return 0; }
  auto const given_back = region_->release(released);
  for (auto const& r : released) { remove_chunks(r); }
  RMM_LOG_DEBUG("{}: gave {} of free memory back to the device to map a request of {} afresh", options_.name,
                rmm::format_bytes(given_back), rmm::format_bytes(bytes));
  return given_back;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::move_all_free_to_clean()
{
  // Not now (a stream capture is in progress, say): what other streams freed stays theirs.
  if (!rmm::mr::detail::device_synchronization_allowed(cuda_device_id{device_})) { return; }
  // Drain first, then synchronize: memory freed after the synchronization stays in its arena,
  // so everything moved has no pending work left on any stream. The map stays locked so that the
  // arenas drained are still there to take their memory back if the synchronization fails.
  std::shared_lock lock{arenas_mutex_};
  std::vector<std::pair<arena*, memory_range>> drained;
  for (auto const& [key, a] : arenas_) {
    std::lock_guard arena_lock{a->mutex};
    a->free.drain([&drained, a = a](memory_range r) { drained.emplace_back(a, r); });
  }
  try {
    cuda_set_device_raii const on_device{cuda_device_id{device_}};
    RMM_CU_TRY(cuCtxSynchronize());
  } catch (...) {
    for (auto const& [a, r] : drained) {  // not clean: back where it was, as a fresh free
      std::lock_guard arena_lock{a->mutex};
      (void)a->free.insert(r, current_chunks(*a), ++a->free_seq);
    }
    throw;
  }
  std::lock_guard clean_lock{clean_.mutex};
  auto const& chunks = current_chunks(clean_);
  for (auto const& [a, r] : drained) { (void)clean_.free.insert(r, chunks, 0); }
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::release()
{
  std::lock_guard lock{growth_mutex_};
  move_all_free_to_clean();
  retire_all_empty();  // every arena is empty now: hand back those no call is working in
  return release_whole_chunks();
}

template <class FreeStore>
expandable_region::suspension stream_ordered_suballocator<FreeStore>::pause(bool discard)
{
  std::lock_guard lock{growth_mutex_};
  if (!can_pause()) { throw rmm::logic_error{options_.name + " cannot pause: it does not grow in one address range"}; }
  if (paused()) { throw rmm::logic_error{options_.name + " is paused already"}; }
  {
    rmm::detail::device_context_scope const context{device_};
    // Nothing queued may touch the memory as it goes.
    if (auto const r = rmm::detail::cuda_driver_table().cuCtxSynchronize(); r != CUDA_SUCCESS) {
      throw rmm::cuda_error{fmt::format("{} cannot pause: waiting for device {} failed: {}", options_.name, device_,
                                        rmm::detail::describe_cu_result(r))};
    }
  }
  std::vector<memory_range> free;
  for (auto const& owner : free_ranges_by_owner()) { free.insert(free.end(), owner.begin(), owner.end()); }
  std::sort(free.begin(), free.end(), [](memory_range a, memory_range b) { return a.start < b.start; });
  host_memory_note const note{*this};  // a failed pause may have made the staging already
  return region_->suspend(free, discard);
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::resume(bool keep_host_memory)
{
  std::lock_guard lock{growth_mutex_};
  if (!paused()) { throw rmm::logic_error{options_.name + " is not paused"}; }
  host_memory_note const note{*this};
  region_->restore(keep_host_memory);
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::release_kept_host_memory()
{
  std::lock_guard lock{growth_mutex_};
  if (region_ == nullptr) { return 0; }
  host_memory_note const note{*this};
  return region_->release_kept_host_memory();
}

template <class FreeStore>
std::size_t stream_ordered_suballocator<FreeStore>::release_whole_chunks()
{
  if constexpr (coalescing) {
    if (region_ != nullptr) {
      // Unmap the whole granules that the free block at the end of the region covers.
      auto const end    = region_->end();
      auto const mapped = region_->mapped_bytes();
      std::lock_guard lock{clean_.mutex};
      auto const tail = clean_.free.remove_block_ending_at(end, current_chunks(clean_));
      if (!tail) { return 0; }
      auto const new_end = region_->shrink_to(tail->start);
      if (new_end > tail->start) {
        (void)clean_.free.insert({tail->start, new_end - tail->start}, current_chunks(clean_), 0);
      }
      remove_chunks({new_end, end - new_end});
      return mapped - region_->mapped_bytes();
    }
  }
  std::vector<chunk> whole;
  {
    std::scoped_lock locks{clean_.mutex, chunks_mutex_};
    for (auto const& c : chunks_) {
      // The clean reserve never holds recent frees (only a stream's own frees do): nothing to merge.
      if (clean_.free.remove_exact({c.start, c.size}, *clean_.chunks)) { whole.push_back(c); }
    }
  }
  std::size_t released = 0;
  for (auto const& c : whole) {
    remove_chunks({c.start, c.size});
    upstream_.deallocate(cuda_stream_view{}, reinterpret_cast<void*>(c.start), c.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
    released += c.size;
  }
  return released;
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::add_chunk(memory_range range, bool in_region)
{
  std::lock_guard lock{chunks_mutex_};
  auto it = std::lower_bound(chunks_.begin(), chunks_.end(), range.start,
                             [](chunk const& x, std::uintptr_t s) { return x.start < s; });
  // Region memory is one address range: a chunk touching another joins it. Upstream chunks never do.
  bool const joins = in_region && it != chunks_.begin() && std::prev(it)->start + std::prev(it)->size == range.start;
  if (in_region && it != chunks_.end() && it->start == range.start + range.size) { it->joins_previous = true; }
  chunks_.insert(it, chunk{range.start, range.size, joins});
  auto const reserved = reserved_bytes_.fetch_add(range.size, std::memory_order_relaxed) + range.size;
  peak_reserved_bytes_.store(std::max(peak_reserved_bytes_.load(std::memory_order_relaxed), reserved),
                             std::memory_order_relaxed);  // under chunks_mutex_
  publish_chunks();
}

template <class FreeStore>
void stream_ordered_suballocator<FreeStore>::remove_chunks(memory_range range)
{
  std::lock_guard lock{chunks_mutex_};
  auto const range_end = range.start + range.size;
  std::vector<chunk> kept;
  kept.reserve(chunks_.size() + 1);
  std::size_t removed = 0;
  for (auto const& c : chunks_) {
    auto const c_end = c.start + c.size;
    if (c_end <= range.start || c.start >= range_end) {
      kept.push_back(c);
      continue;
    }
    if (c.start < range.start) { kept.push_back({c.start, range.start - c.start, c.joins_previous}); }
    if (c_end > range_end) { kept.push_back({range_end, c_end - range_end, false}); }  // after a hole
    removed += std::min(c_end, range_end) - std::max(c.start, range.start);
  }
  chunks_ = std::move(kept);
  reserved_bytes_.fetch_sub(removed, std::memory_order_relaxed);
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

}  // namespace rmm::mr::detail
