// SPDX-License-Identifier: Apache-2.0
#pragma once

// Tagged regions (rmm_shim_region_begin / _end): the memory a thread allocates inside a region
// belongs to the region's tag, and each tag has a stack of its own on each device, so that it can
// be paused and resumed without the rest of the process (pause_control.hpp). Allocations outside
// every region are untagged (region 0), served as without regions.
//
// A region covers the thread that began it, until it ends it; regions nest. A process-wide region
// (RMM_SHIM_REGION_ALL_THREADS) covers every thread that is in no region of its own: frameworks that
// allocate on worker threads (JAX, a data loader) are covered that way.
//
// While a tag is paused its allocations wait for its resume (up to `pause_timeout`, then out of
// memory) and its frees are held until then; untagged memory and other tags run on.

#include "stacks/thread_cache.hpp"  // kept_block

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmm::shim {

/// A tag's index: 0 is untagged memory.
using region_id = std::uint8_t;
/// Tags a process may name, untagged memory included.
inline constexpr std::size_t max_regions = 16;
/// The longest tag name.
inline constexpr std::size_t max_region_name = 63;
/// How deeply a thread's regions may nest.
inline constexpr std::size_t max_region_depth = 16;

class region_table {
 public:
  /// Whether `name` may name a tag: 1 to 63 characters of letters, digits, '_', '-', '.', ':' and
  /// '/'. Why not, for people, or empty.
  [[nodiscard]] static std::string why_not_a_name(std::string_view name);

  /// The tag `name`, registered at its first use with `discard` as what a pause does with its
  /// contents unless the pause says; a later use with another `discard` changes it. Nothing when
  /// every tag is taken (`error` says so).
  [[nodiscard]] std::optional<region_id> find_or_add(std::string_view name, bool discard, std::string& error);
  /// The tag `name`, or nothing when no region named it.
  [[nodiscard]] std::optional<region_id> find(std::string_view name) const;
  /// Tags registered, untagged memory aside: ids 1 to count().
  [[nodiscard]] std::size_t count() const noexcept { return count_.load(std::memory_order_acquire); }
  [[nodiscard]] std::string name(region_id id) const;
  /// The name of registered tag `id`, which never changes: valid for the life of the process.
  [[nodiscard]] char const* stable_name(region_id id) const noexcept { return tags_[id].name.data(); }
  [[nodiscard]] bool discards(region_id id) const noexcept;

  /// Whether tag `id` is paused on its own (one atomic load).
  [[nodiscard]] bool paused(region_id id) const noexcept
  {
    return id != 0 && tags_[id].paused.load(std::memory_order_acquire);
  }
  /// Marks tag `id` paused, with what its pause did; every served call is kept out meanwhile.
  void mark_paused(region_id id, std::size_t device_bytes, std::size_t saved_bytes, bool discarded) noexcept;
  /// Marks tag `id` running again; every served call is kept out meanwhile. Returns the frees
  /// held while it was paused and wakes the allocations waiting for it.
  [[nodiscard]] std::vector<kept_block> mark_resumed(region_id id);
  /// A free of a block of paused tag `block.region`: held for its resume. False when the tag is
  /// not paused (the caller frees it as usual).
  [[nodiscard]] bool hold_free(kept_block const& block) noexcept;
  /// An allocation found tag `id` paused: waits until it resumes or `deadline` passes; false when
  /// the deadline passed.
  [[nodiscard]] bool wait_for_resume(region_id id, std::chrono::steady_clock::time_point deadline) noexcept;
  /// The device was reset: the frees held for its blocks go with its memory.
  void forget_device(int device) noexcept;

  /// What the report says of a tag.
  struct tag_status {
    std::string name;
    bool discards{false};         ///< a pause drops its contents unless it says otherwise
    bool paused{false};           ///< paused on its own, or with the process
    std::uint64_t pauses{0};      ///< pauses of it, alone or with the process
    std::size_t device_bytes{0};  ///< given back by its last pause
    std::size_t saved_bytes{0};   ///< contents its last pause kept in host memory
    bool discarded{false};        ///< its last pause dropped the contents
    std::size_t held_frees{0};    ///< frees waiting for its resume
  };
  [[nodiscard]] tag_status status(region_id id) const;
  /// Records what a pause of the whole process did with tag `id` (the process's pause state says
  /// whether it is paused).
  void note_process_pause(region_id id, std::size_t device_bytes, std::size_t saved_bytes, bool discarded) noexcept;

 private:
  struct tag {
    std::array<char, max_region_name + 1> name{};
    std::atomic<bool> discards{false};
    std::atomic<bool> paused{false};
    std::uint64_t pauses{0};
    std::size_t device_bytes{0};
    std::size_t saved_bytes{0};
    bool discarded{false};
    std::vector<kept_block> held;
  };
  mutable std::mutex mutex_;  // names, the figures, the held frees
  std::condition_variable resumed_;
  std::array<tag, max_regions> tags_{};
  std::atomic<std::size_t> count_{0};
};

namespace detail {
/// The calling thread's regions, innermost last. Constant-initialized: no guard to reach them.
struct thread_regions {
  std::array<region_id, max_region_depth> ids{};
  std::size_t depth{0};
};
inline thread_local thread_regions this_thread_regions{};
/// The region over every thread, or 0.
inline std::atomic<region_id> process_region{0};
}  // namespace detail

/// The tag the calling thread allocates under: its innermost region, else the process-wide one,
/// else 0 (untagged). Asked by every served allocation: a load or two, inline.
[[nodiscard]] inline region_id current_region() noexcept
{
  auto const& mine = detail::this_thread_regions;
  if (mine.depth > 0) [[unlikely]] { return mine.ids[mine.depth - 1]; }
  return detail::process_region.load(std::memory_order_relaxed);
}
/// Begins a region of tag `id` for the calling thread, or for every thread (`all_threads`). False
/// when the thread's regions nest too deeply, or a process-wide region is in place already.
[[nodiscard]] bool begin_region(region_id id, bool all_threads, std::string& error) noexcept;
/// Ends the calling thread's innermost region, else the process-wide one. False when there is none.
[[nodiscard]] bool end_region() noexcept;

}  // namespace rmm::shim
