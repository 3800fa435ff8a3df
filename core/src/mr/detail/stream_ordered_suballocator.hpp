// SPDX-License-Identifier: Apache-2.0
#pragma once

// The engine behind pool_memory_resource, arena_memory_resource and fixed_size_memory_resource: a
// sub-allocator over an upstream resource with one arena of free memory per stream.
//
// - Memory freed on a stream goes to that stream's arena and is reused by later allocations on
//   the same stream with no synchronization and no CUDA call.
// - Arenas belong to streams, not to handles: they are keyed by the driver's stream id, because a
//   handle is reused once its stream is destroyed and cudaStreamPerThread is a different stream in
//   each thread.
// - An allocation its own arena cannot meet tries, in this order: the clean reserve (free memory
//   no stream has pending work on); blocks whose freeing stream has already passed the free (the
//   arena's event completed: no wait), which move to the clean reserve; a block from another
//   stream's arena behind that arena's event (the allocating stream waits on the event: no host
//   wait); then, when most of the pool sits free in other streams' arenas, one device
//   synchronization that makes all of it clean, rather than growing; a new chunk from upstream
//   (up to the maximum size); and finally all free memory after one device synchronization.
// - Each arena records its event on its own stream every 32 frees (and when its stream misses),
//   outside the arena lock, always from a call that passed that stream, so a stream is never
//   touched after its user let go of it. Only blocks freed before the last record can move to
//   another stream through the event; the rest wait for the device synchronization.
// - Arenas left empty and unused are given back to a spare list, and too many arenas (streams
//   created and dropped freely) trigger the device synchronization that empties them, so the cost
//   of the slow path stays flat in the number of streams ever seen.
// - Each arena has its own lock and threads find their arena through a thread-local cache, so
//   threads on different streams do not contend.
// - FreeStore decides how an arena keeps its free memory: coalescing_free_list (good-fit,
//   coalescing, any size) or fixed_block_store (a stack of equal blocks). free_store.hpp lists what
//   a store provides; the engine asks it what it can do, never which store it is.

#include "coalescing_free_list.hpp"
#include "expandable_region.hpp"
#include "fixed_block_store.hpp"
#include "free_store.hpp"
#include "light_mutex.hpp"
#include "remapping_allowance.hpp"

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/suballocator_statistics.hpp>
#include <rmm/resource_ref.hpp>

#include <atomic>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace rmm::mr::detail {

struct suballocator_options {
  std::string name;             ///< for messages: "pool_memory_resource", ...
  std::size_t initial_size{0};  ///< reserved at construction
  std::optional<std::size_t> maximum_size;
  std::size_t granularity{256};                ///< requests are rounded up to a multiple of this
  std::optional<std::size_t> largest_request;  ///< larger requests throw rmm::bad_alloc
  std::size_t growth_step{0};                  ///< least amount to grow by (0: never grow)
  bool per_thread_default_arenas{false};       ///< default-stream allocations get one arena per thread
  /// Shared large blocks (arena resource): with per_thread_default_arenas, blocks of at least this
  /// size on the legacy default stream are allocated from and freed to the stream's one shared
  /// arena, whichever thread makes the call, so they coalesce with each other; smaller ones keep
  /// the per-thread arenas. The shared arena takes whole blocks from the clean reserve.
  std::optional<std::size_t> shared_arena_threshold;
  bool log_state_on_failure{false};  ///< write every arena's state to the debug log on OOM
  /// Grow by mapping device memory at the end of one reserved address range (CUDA virtual memory
  /// management) instead of asking the upstream, where the device supports it: free memory then
  /// coalesces across growth steps. Only for coalescing free stores.
  bool expandable{false};
  /// With expandable: refuse to be built where the device cannot grow that way (no silent fallback).
  bool require_expandable{false};
  /// With expandable: before mapping new memory, move idle free granules from the middle of the
  /// range to its end (small growth steps are then mapped one granule at a time), within the
  /// allowance of remapping_allowance.hpp.
  bool remap_free_granules{false};
};

template <class FreeStore>
class stream_ordered_suballocator {
 public:
  /// `make_store()` creates the free store of each arena.
  stream_ordered_suballocator(any_device_resource upstream,
                              suballocator_options options,
                              std::function<FreeStore()> make_store);
  /// Gives every chunk back to upstream.
  ~stream_ordered_suballocator();
  stream_ordered_suballocator(stream_ordered_suballocator const&)            = delete;
  stream_ordered_suballocator& operator=(stream_ordered_suballocator const&) = delete;

  [[nodiscard]] void* allocate(std::size_t bytes, cuda_stream_view stream);
  void deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept;

  /// Memory any stream may use as soon as the call returns, for callers with no stream (cudaMalloc
  /// under the preload shim): the clean reserve, blocks whose freeing stream has passed them, a
  /// block of another arena once the host waited for its event, growth. No stream is made to wait.
  [[nodiscard]] void* allocate_sync(std::size_t bytes);
  /// Memory no stream uses any more: it goes straight to the clean reserve.
  void deallocate_sync(void* ptr, std::size_t bytes) noexcept;

  /// Synchronizes the device and gives every completely free chunk back to upstream. Returns the
  /// bytes given back.
  std::size_t release();
  /// suballocator_resource::release_mapped_memory_after_reset: unmaps and gives back the region.
  void release_mapped_memory_after_reset() noexcept
  {
    std::lock_guard lock{growth_mutex_};
    region_.reset();
  }

  /// Whether pause() can give the pool's device memory back: only a pool that grows in one region
  /// can, since its blocks keep their addresses while the memory under them is away.
  [[nodiscard]] bool can_pause() const noexcept { return region_ != nullptr; }
  /// Synchronizes the device, keeps the contents of every allocated byte in host memory (unless
  /// `discard`) and gives all the pool's device memory back, keeping its addresses. The caller
  /// keeps every other call out until resume(). Nothing changes when it throws: rmm::logic_error
  /// when the pool cannot pause or is paused, else as expandable_region::suspend.
  expandable_region::suspension pause(bool discard);
  /// Maps the memory back at the same addresses with the contents pause() kept; throws as
  /// expandable_region::restore, the pool then still paused. The host memory of the contents
  /// stays for the next pause: held with `keep_host_memory`, else given back lazily.
  void resume(bool keep_host_memory);
  /// Host memory the last resume() kept for the next pause, held or given back lazily, in bytes
  /// (without waiting for a pause under way).
  [[nodiscard]] std::size_t kept_host_bytes() const noexcept
  {
    return kept_host_bytes_.load(std::memory_order_relaxed);
  }
  /// Page-locked host memory the pauses' copies are staged through, held for the next pause.
  [[nodiscard]] std::size_t staging_host_bytes() const noexcept
  {
    return staging_host_bytes_.load(std::memory_order_relaxed);
  }
  /// Gives that host memory and the staging back; returns their bytes.
  std::size_t release_kept_host_memory();
  [[nodiscard]] bool paused() const noexcept { return region_ != nullptr && region_->suspended(); }

  [[nodiscard]] suballocator_statistics statistics() const;
  [[nodiscard]] std::size_t reserved_bytes() const noexcept { return reserved_bytes_.load(std::memory_order_relaxed); }
  [[nodiscard]] suballocator_options const& options() const noexcept { return options_; }
  [[nodiscard]] device_async_resource_ref upstream() const noexcept { return upstream_; }
  /// True when growth maps memory into one contiguous address range (options().expandable and
  /// the device supports it).
  [[nodiscard]] bool grows_contiguously() const noexcept { return region_ != nullptr; }

  /// Bytes a request occupies. `bytes` must be at most max_request().
  [[nodiscard]] std::size_t block_size(std::size_t bytes) const noexcept;
  /// The largest request whose block size does not overflow.
  [[nodiscard]] std::size_t max_request() const noexcept;

  /// Stream arenas currently held (live, not on the spare list).
  [[nodiscard]] std::size_t arena_count() const;

  // Introspection for tests: the free ranges of each owner (every arena, then the clean reserve)
  // and the upstream chunks. Not for hot paths: takes every lock.
  [[nodiscard]] std::vector<std::vector<memory_range>> free_ranges_by_owner() const;
  [[nodiscard]] std::vector<memory_range> upstream_chunks() const;

 private:
  static_assert(free_store<FreeStore>, "a FreeStore provides what free_store.hpp lists");
  static_assert(FreeStore::coalesces == coalescing_free_store<FreeStore>,
                "a FreeStore that coalesces provides what coalescing_free_store lists");
  /// Free memory that touches merges (free_store.hpp): only then can a stream keep the rest of a
  /// clean block beside what it took, and growth extend the free block at the end of one region.
  static constexpr bool coalescing = coalescing_free_store<FreeStore>;

  /// Whose free memory an arena holds: a stream (by driver id), and with
  /// per_thread_default_arenas a thread on the legacy stream.
  struct arena_key {
    std::uint64_t stream_id{0};
    std::uint64_t thread{0};  // thread_token() for a thread's own arena on the legacy stream
    bool operator==(arena_key const&) const = default;
  };
  struct arena_key_hash {
    std::size_t operator()(arena_key const& key) const noexcept;
  };
  struct arena {
    explicit arena(FreeStore store) : free{std::move(store)} {}
    mutable light_mutex mutex;
    arena_key key{};
    bool live{false};                // false: retired to the spare list (cached pointers must look again)
    bool used_since_scan{true};      // retired only when empty and unused for a whole scan interval
    std::uint32_t pins{0};           // calls between lock releases, and records in flight: not retired
    cudaEvent_t event{};             // recorded on the arena's stream; created at the first record
    std::uint64_t free_seq{0};       // frees so far
    std::uint64_t claimed_seq{0};    // frees a record has been started for (rate limit)
    std::uint64_t covered_seq{0};    // frees a completed record of `event` covers
    std::uint64_t harvested_seq{0};  // covered frees already moved to the clean reserve
    bool holds_clean{false};         // has blocks taken from the clean reserve whole (sequence 0)
    FreeStore free;
    std::shared_ptr<chunk_starts const> chunks;  // snapshot, refreshed when chunks_version_ moves
    std::uint64_t chunks_version{~std::uint64_t{0}};
  };
  /// An arena locked for the calling stream, pinned while a caller drops and retakes the lock.
  class pinned_arena;
  struct chunk {
    std::uintptr_t start;
    std::size_t size;
    bool joins_previous{false};  // contiguous with the chunk before it: free memory may merge across
  };
  /// Past this many arenas, the slow path synchronizes the device once to empty them all, so that
  /// programs creating and dropping streams freely do not make every later miss scan more arenas.
  static constexpr std::size_t arenas_before_reclaim = 256;
  /// What a scan of the arenas found.
  struct harvest_result {
    std::size_t stranded_bytes{0};  // free in arenas, usable elsewhere only behind a wait
    std::size_t arenas{0};
  };

  /// The arena a block of `size` bytes belongs to on `stream`.
  [[nodiscard]] arena_key key_for(cudaStream_t stream, std::size_t size) const;
  [[nodiscard]] bool is_shared_large(cudaStream_t stream, std::size_t size) const noexcept;
  /// Whether a miss takes a whole clean block and keeps the rest in its arena: for
  /// a pool serving one stream only, whose frees then merge with that rest (a cut would leave it in
  /// the reserve, where nothing freed on the stream merges with it). The rest goes back to the
  /// reserve at the first scan of another stream or a synchronous allocation.
  [[nodiscard]] bool keeps_clean_rest(cudaStream_t stream, std::size_t size) const noexcept;
  /// Clean memory for `requester`: a cut of a clean block, or, for a shared large block, the whole
  /// good-fit block with the rest kept next to it in the requester's arena.
  std::optional<memory_range> take_clean(arena& requester, cudaStream_t stream, std::size_t size);
  /// The arena of `key`, locked and live. Creates it when needed.
  std::unique_lock<light_mutex> lock_arena(arena_key key, arena*& found);
  arena& find_or_create(arena_key key);
  /// The chunk starts a's free memory merges by (caller holds a.mutex): a's snapshot, renewed
  /// first when chunks were added or removed since.
  chunk_starts const& current_chunks(arena& a) const;
  /// Merges a's recent frees (coalescing_free_list::insert_recent), so reports see whole blocks.
  /// Caller holds a.mutex.
  void merge_recent_frees(arena& a) const;
  /// Adds a range freed on a's stream (caller holds a.mutex); returns the sequence number to
  /// record an event for, or 0. Logs and drops a range that is free already (a double free).
  [[nodiscard]] std::uint64_t insert_locked(arena& a, memory_range range, cudaStream_t stream);
  /// Adds a range to a pinned arena of `stream`; records the arena's event now and then.
  void insert_free(arena& a, memory_range range, cudaStream_t stream);
  /// Adds a range with no pending work to the clean reserve.
  void insert_clean(memory_range range);
  /// Records a's event on `stream` (a's own, passed by the current call), covering the frees up
  /// to `free_seq`, then unpins a. Called without a.mutex (the driver call takes a while and the
  /// driver serializes such calls between threads).
  void record(arena& a, std::uint64_t free_seq, cudaStream_t stream) noexcept;
  std::optional<memory_range> take_from(arena& a, std::size_t bytes);
  /// Frees with no sensible owner (the stream is unknown, bookkeeping failed): waits for the device,
  /// then the memory is clean. Leaks it, loudly, when even that fails.
  void deallocate_after_device_sync(memory_range range, cudaStream_t stream) noexcept;

  /// Moves the blocks whose arena event completed to the clean reserve and retires idle arenas.
  /// The arenas of `requester`'s stream are left alone: their blocks are usable by it already, and
  /// moving them would only keep them from coalescing with what it frees next.
  harvest_result harvest(arena const* requester);
  void retire_idle(std::vector<arena*> const& candidates);
  /// Retires every empty arena no call is working in. Caller holds growth_mutex_.
  void retire_all_empty();
  /// When a program has created and dropped many streams: one device synchronization empties every
  /// arena, and the empty ones are retired, so the number of arenas stays bounded.
  void trim_arenas();
  std::optional<memory_range> steal(arena& thief, cudaStream_t stream, std::size_t bytes);
  /// A covered block of any arena, after the host waited for that arena's event.
  std::optional<memory_range> take_after_host_wait(std::size_t bytes);
  /// Asks the before-growth hook for memory back until the request fits in the requester's arena
  /// (null for a synchronous request) or the clean reserve, or the hook has nothing more.
  std::optional<memory_range> take_after_hook(arena* requester, std::size_t bytes);
  void check_request(std::size_t bytes) const;
  [[nodiscard]] bool should_synchronize_before_growing(harvest_result const& scan, std::size_t bytes) const;
  std::optional<memory_range> grow(arena& requester, cudaStream_t stream, std::size_t bytes);
  /// grow() for a caller that holds growth_mutex_.
  std::optional<memory_range> grow_locked(arena& requester, cudaStream_t stream, std::size_t bytes);
  /// grow_locked() where growth maps memory into the region: at its end, extending the free block
  /// there, or into a hole. Three steps follow, sharing a region_tail.
  std::optional<memory_range> grow_region(arena& requester, cudaStream_t stream, std::size_t bytes);
  /// What the request still lacks beyond the requester's free block at the region's end, and where
  /// the memory this call put at the end begins (everything beyond it is new).
  struct region_tail {
    std::size_t missing{0};
    std::optional<std::uintptr_t> new_from;
  };
  /// Step 1: lengthens the requester's free block at the region's end without mapping anything (the
  /// clean reserve's block there, idle granules moved to the end), since the pool should hold no
  /// more device memory than it must.
  region_tail extend_tail_block(arena& requester, cudaStream_t stream, std::size_t bytes);
  /// Step 2: maps what is missing, at the end (placed there, extending the tail: returns nothing) or,
  /// once the addresses there are used up, in a hole (returned: it holds the whole request).
  std::optional<memory_range> map_new_memory(arena& requester,
                                             cudaStream_t stream,
                                             std::size_t bytes,
                                             region_tail& tail);
  /// Step 3, once the request is taken from the tail: the new memory left at the end goes to the
  /// clean reserve, since no stream has used it yet.
  void place_rest(arena& requester, std::uintptr_t new_from);
  /// How much map_new_memory() maps: at least `minimum`, `preferred` if the device has it.
  struct region_mapping {
    std::size_t minimum{0};
    std::size_t preferred{0};
    bool at_end{false};  // extends the tail; otherwise a hole that holds the whole request
  };
  [[nodiscard]] region_mapping plan_mapping(std::size_t bytes, std::size_t missing) const;
  /// Memory just added at the region's end, given to the owner of the free block it extends.
  void place_at_end(arena& requester, memory_range range, cudaStream_t stream);
  /// Moves up to `bytes` of free granules that no queued work touches (the clean reserve's, and
  /// the requester's own that its completed event covers, waiting for it unless `stream` is being
  /// captured) to the end of the region; returns the range they now occupy there, not yet free
  /// anywhere. Caller holds growth_mutex_.
  std::optional<memory_range> recycle_idle_granules(arena& requester, cudaStream_t stream, std::size_t bytes);
  /// recycle_idle_granules' first part: up to `bytes` of such granules taken out of the free
  /// lists, in address order.
  std::vector<std::uintptr_t> take_idle_granules(arena& requester, cudaStream_t stream, std::size_t bytes);
  /// Its last part: the granules that stayed back in the clean reserve, and the places of those
  /// that left (moved or lost) out of the chunks.
  void settle_recycled(std::vector<std::uintptr_t> const& granules, expandable_region::recycled const& result);
  /// The last resort before out of memory: every arena's free memory made clean (a device
  /// synchronization), then, where the device has no memory left to grow and the request fits in
  /// no free block, the region's physical allocations that lie wholly in free memory given back and
  /// the request mapped afresh. As cudaMalloc, the pool then fails only when what is live does not
  /// leave room for the request.
  std::optional<memory_range> reclaim_all_and_take(std::size_t bytes);
  /// Gives the region's physical allocations that lie wholly within the clean reserve's free blocks
  /// back to the device, when the device would then have room for `bytes`; returns the bytes given
  /// back. Caller holds growth_mutex_.
  std::size_t release_free_allocations(std::size_t bytes);
  /// Moves every arena's free memory to the clean reserve, synchronizing the device in between.
  /// Caller holds growth_mutex_.
  void move_all_free_to_clean();
  /// Gives every chunk that is one free range of the clean reserve back to upstream. Caller holds
  /// growth_mutex_.
  std::size_t release_whole_chunks();
  /// Memory now reserved at `range`: a chunk, joined to those it touches when `in_region`.
  void add_chunk(memory_range range, bool in_region);
  /// Memory no longer reserved in `range` (the chunks it overlaps lose that part).
  void remove_chunks(memory_range range);
  void publish_chunks();  // caller holds chunks_mutex_

  [[noreturn]] void throw_out_of_memory(std::size_t bytes, cuda_stream_view stream, std::string const& upstream_error);
  void log_state() const;

  mutable any_device_resource upstream_;  // a handle: references to it are handed out by const members
  suballocator_options options_;
  std::function<FreeStore()> make_store_;
  int device_;
  std::uint64_t const id_;  // never reused, so thread-local caches cannot confuse two instances

  std::atomic<std::size_t> reserved_bytes_{0};
  std::atomic<std::size_t> peak_reserved_bytes_{0};
  std::unique_ptr<expandable_region> region_;  // set when growing contiguously
  remapping_allowance remapping_;              // changed under growth_mutex_

  mutable std::shared_mutex arenas_mutex_;  // the map, the spare list and retirement
  std::unordered_map<arena_key, arena*, arena_key_hash> arenas_;
  std::vector<std::unique_ptr<arena>> all_arenas_;  // owns live and spare arenas; never shrinks
  std::vector<arena*> spare_arenas_;
  std::atomic<std::size_t> arena_count_{0};   // arenas_.size(), readable without the lock
  std::atomic<bool> synchronous_use_{false};  // allocate_sync was called: the reserve must stay shared

  arena clean_;  // free memory with no pending work on any stream

  std::mutex growth_mutex_;                         // growth, reclaim and release, one at a time
  std::atomic<std::size_t> kept_host_bytes_{0};     // region_->kept_host_bytes(), for readers without the lock
  std::atomic<std::size_t> staging_host_bytes_{0};  // region_->staging_host_bytes(), likewise
  /// Copies the region's host-memory figures into the atomics above when it leaves its scope,
  /// however the pause, resume or release under growth_mutex_ ended.
  struct host_memory_note {
    stream_ordered_suballocator& engine;
    explicit host_memory_note(stream_ordered_suballocator& e) noexcept : engine{e} {}
    host_memory_note(host_memory_note const&)            = delete;
    host_memory_note& operator=(host_memory_note const&) = delete;
    ~host_memory_note()
    {
      engine.kept_host_bytes_.store(engine.region_->kept_host_bytes(), std::memory_order_relaxed);
      engine.staging_host_bytes_.store(engine.region_->staging_host_bytes(), std::memory_order_relaxed);
    }
  };
  mutable std::mutex chunks_mutex_;
  std::vector<chunk> chunks_;  // sorted by start
  std::shared_ptr<chunk_starts const> chunk_starts_;
  std::atomic<std::uint64_t> chunks_version_{0};
};

std::uint64_t next_suballocator_id() noexcept;

// Instantiated in stream_ordered_suballocator.cpp.
extern template class stream_ordered_suballocator<coalescing_free_list>;
extern template class stream_ordered_suballocator<fixed_block_store>;

}  // namespace rmm::mr::detail
