#pragma once

// One resource stack per device, built from the configuration the first time a program allocates
// on that device, and never destroyed: at exit the pools are dropped, not freed (the driver may
// already be going away, and the process's memory goes with it).

#include <rmm/mr/suballocator_statistics.hpp>
#include <rmm/resource_ref.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace rmm::shim {

class device_stacks {
 public:
  static constexpr int max_devices = 64;
  /// Hands a free that keeps cudaFree's promise to the device's deferred frees.
  using defer_fn = std::function<void(int device, std::uintptr_t ptr, std::size_t size)>;

  explicit device_stacks(defer_fn defer) : defer_{std::move(defer)} {}

  /// The stack of `device`, built on first use; the device's primary context must be current.
  /// Throws what building throws (rmm::config::config_error, rmm::cuda_error, rmm::bad_alloc).
  [[nodiscard]] rmm::mr::any_device_resource& get(int device);
  /// The stack of `device` if it was built, else null. Never builds.
  [[nodiscard]] rmm::mr::any_device_resource* find(int device) const noexcept;
  /// Where `device`'s deferred frees go back once their epoch completed: the stack, or with the
  /// event log on, the stack under the log (which recorded each free when the program made it).
  [[nodiscard]] rmm::mr::any_device_resource* find_below_log(int device) const noexcept;
  /// Whether `device`'s stack logs its events: a device-wide free then goes through the stack's
  /// deallocate_sync, to be logged before it is deferred.
  [[nodiscard]] bool logs(int device) const noexcept;
  /// Whether frees of `device` may wait in the freeing thread's cache (thread_cache.hpp): only when
  /// the stack's top layer is a sub-allocator, with nothing above it that counts, logs, limits or
  /// tracks each call (it would miss the calls the cache serves).
  [[nodiscard]] bool parks_frees(int device) const noexcept;

  /// What the sub-allocators of `device`'s stack hold, summed over its layers; nullopt when the
  /// stack was not built. Takes their locks, calls no CUDA.
  [[nodiscard]] std::optional<rmm::mr::suballocator_statistics> statistics(int device) const;
  /// Gives the free memory of every sub-allocator of `device`'s stack back to the device.
  std::size_t release(int device);
  /// Writes what the logging layers hold (no CUDA).
  void flush_logs() const noexcept;

 private:
  struct stack {
    std::vector<rmm::mr::any_device_resource> layers;  // top first; layers[0] is the stack
    std::size_t below_log{0};                          // the index of the layer under the log
    bool parks_frees{false};
  };
  [[nodiscard]] stack* built(int device) const noexcept;

  std::array<std::atomic<stack*>, max_devices> stacks_{};
  std::mutex building_;
  defer_fn defer_;
};

}  // namespace rmm::shim
