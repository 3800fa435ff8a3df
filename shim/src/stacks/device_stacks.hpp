// SPDX-License-Identifier: Apache-2.0
#pragma once

// One resource stack per device and tag (regions.hpp), built from the configuration the first time
// a program allocates on that device under that tag, and never destroyed: at exit the pools are dropped, not freed (the
// driver may already be going away, and the process's memory goes with it). With the event log on, each device also has
// its log, which the dispatcher writes as the program makes its calls (a free when the program made it, not when its
// epoch completed; an allocation served with the block its thread kept, as any other).

#include "devices.hpp"
#include "stacks/regions.hpp"
#include "mr/detail/event_log_writer.hpp"

#include <rmm/mr/suballocator_statistics.hpp>
#include <rmm/resource_ref.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rmm::shim {

class device_stacks {
 public:
  using event_log = rmm::mr::detail::event_log_writer;

  device_stacks() = default;

  /// The stack of `device` for tag `region`, built on first use; the device's primary context must
  /// be current. Throws what building throws (rmm::config::config_error, rmm::cuda_error,
  /// rmm::bad_alloc).
  [[nodiscard]] rmm::mr::any_device_resource& get(int device, region_id region = 0);
  /// That stack if it was built, else null. Never builds.
  [[nodiscard]] rmm::mr::any_device_resource* find(int device, region_id region = 0) const noexcept
  {
    auto* s = built(device, region);
    return s == nullptr ? nullptr : &s->layers.front();
  }
  /// Whether any stack of `device` was built, whatever its tag.
  [[nodiscard]] bool any(int device) const noexcept
  {
    for (std::size_t region = 0; region < max_regions; ++region) {
      if (built(device, static_cast<region_id>(region)) != nullptr) { return true; }
    }
    return false;
  }
  /// `device`'s event log, or null when the log is off (or the device's first stack was not
  /// built). Devices whose log name is one file share its writer; a device keeps its log when its
  /// stack is rebuilt after a reset.
  [[nodiscard]] event_log* log(int device) const noexcept
  {
    if (!has_device_slot(device)) { return nullptr; }
    return logs_[static_cast<std::size_t>(device)].load(std::memory_order_acquire);
  }
  /// The alignment of every block handed out on `device`: what a native cudaMalloc gives and
  /// programs rely on without saying so (a texture object over linear memory needs the device's
  /// texture alignment, 512 bytes on current GPUs). CUDA_ALLOCATION_ALIGNMENT before the stack is
  /// built.
  [[nodiscard]] std::size_t alignment(int device) const noexcept
  {
    if (!has_device_slot(device)) { return 256; }
    auto const a = alignments_[static_cast<std::size_t>(device)].load(std::memory_order_acquire);
    return a == 0 ? std::size_t{256} : a;
  }
  /// The largest alignment a block can be given (its offset in an over-allocated block must fit
  /// the ownership record).
  static constexpr std::size_t max_alignment = std::size_t{1} << 15;

  /// Whether frees of `device` may wait in the freeing thread's cache (thread_cache.hpp): only when
  /// the stack's top layer is a sub-allocator, with nothing above it that counts, logs, limits or
  /// tracks each call (it would miss the calls the cache serves).
  [[nodiscard]] bool keeps_frees(int device) const noexcept
  {
    auto const* s = built(device);
    return s != nullptr && s->keeps_frees;
  }

  /// What the sub-allocators of `device`'s stacks hold, summed over their layers and tags; nullopt
  /// when none was built. A paused stack holds no device memory: it counts its live bytes only.
  /// Takes their locks, calls no CUDA.
  [[nodiscard]] std::optional<rmm::mr::suballocator_statistics> statistics(int device) const;
  /// The same for the stack of one tag.
  [[nodiscard]] std::optional<rmm::mr::suballocator_statistics> statistics(int device, region_id region) const;
  /// Gives the free memory of every sub-allocator of `device`'s running stacks back to the device.
  std::size_t release(int device);
  /// Writes what the event logs and the stacks' logging layers hold (no CUDA).
  void flush_logs() const noexcept;

  /// Why `device`'s stack cannot pause, for people; nothing when it can or was not built. Only a
  /// stack whose lowest sub-allocator is a pool growing in one address range can: every block of
  /// every layer above lies in that pool's memory.
  [[nodiscard]] std::optional<std::string> why_not_pausable(int device, region_id region = 0) const;
  /// What pausing `device`'s stack gave back and kept.
  struct paused_memory {
    std::size_t device_bytes{0};
    std::size_t saved_bytes{0};
    bool staged{true};  ///< copied through page-locked staging
  };
  /// Pauses `device`'s stack (its lowest pool: suballocator_resource::pause_device_memory); the
  /// caller keeps every call out. Nothing when it was not built. Throws what the pool throws, with
  /// nothing changed.
  paused_memory pause(int device, region_id region, bool discard);
  /// Resumes `device`'s paused stack; nothing to do when it is not paused. Throws what the pool
  /// throws (out of memory, saying how much is missing), the stack still paused. The host memory
  /// of the contents stays for the next pause: held with `keep_host_memory`, else given back lazily.
  void resume(int device, region_id region, bool keep_host_memory);
  /// Host memory `device`'s stacks kept from its last resume for the next pause, held or given back
  /// lazily, in bytes.
  [[nodiscard]] std::size_t kept_host_bytes(int device) const noexcept;
  /// Page-locked host memory `device`'s stacks hold for staging a pause's copies, in bytes.
  [[nodiscard]] std::size_t staging_host_bytes(int device) const noexcept;
  /// Gives that host memory and the staging back; returns their bytes.
  std::size_t release_kept_host_memory(int device);
  [[nodiscard]] bool paused(int device, region_id region) const noexcept;

  /// Forgets `device`'s stacks after the device was reset: its memory is gone with the context, so
  /// the stack is dropped without a CUDA call (never destroyed), and the next allocation builds a
  /// new one. Its log stays.
  void forget(int device) noexcept;

 private:
  struct stack {
    std::vector<rmm::mr::any_device_resource> layers;  // top first; layers[0] is the stack
    bool keeps_frees{false};
    std::size_t alignment{256};
  };
  [[nodiscard]] stack* built(int device, region_id region = 0) const noexcept
  {
    if (!has_device_slot(device) || region >= max_regions) { return nullptr; }
    return stacks_[region][static_cast<std::size_t>(device)].load(std::memory_order_acquire);
  }
  /// Calls `f(region, stack)` for each built stack of `device`.
  template <class F>
  void for_each_stack(int device, F&& f) const
  {
    for (std::size_t region = 0; region < max_regions; ++region) {
      if (auto* s = built(device, static_cast<region_id>(region))) { f(static_cast<region_id>(region), *s); }
    }
  }

  /// The event log of `device` (its file opened once per file), made with its first stack.
  [[nodiscard]] event_log* make_log(int device);

  std::array<std::array<std::atomic<stack*>, max_devices>, max_regions> stacks_{};
  std::array<std::atomic<std::size_t>, max_devices> alignments_{};  // 0 until a stack of the device is built
  std::array<std::atomic<event_log*>, max_devices> logs_{};
  std::vector<std::pair<std::string, std::unique_ptr<event_log>>> log_files_;  // under building_
  std::mutex building_;
};

}  // namespace rmm::shim
