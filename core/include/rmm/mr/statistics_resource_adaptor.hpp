#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/detail/adaptor_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace rmm::mr {

namespace detail {
struct statistics_state;
}

/**
 * Counts what passes through it: bytes and allocations currently outstanding, their peak and
 * their total since construction. Safe to use from many threads.
 *
 * Counters form a stack: push_counters() starts a fresh level (to measure one phase of a
 * program), pop_counters() ends it and folds it into the level below, whose peak then accounts
 * for what the phase reached on top of what was already outstanding.
 *
 * Copies share the counters and compare equal.
 */
class statistics_resource_adaptor final
  : public detail::adaptor_resource<statistics_resource_adaptor, detail::statistics_state> {
 public:
  struct counter {
    std::int64_t value{0};  ///< outstanding now
    std::int64_t peak{0};   ///< highest `value` seen
    std::int64_t total{0};  ///< sum of everything ever added

    counter& operator+=(std::int64_t amount) noexcept;
    counter& operator-=(std::int64_t amount) noexcept;
    /// Folds a counter measured on top of this one (a popped level) into this one.
    void add_counters_from_tracked_sub_block(counter const& sub) noexcept;
  };

  explicit statistics_resource_adaptor(any_device_resource upstream);

  /// Bytes of the current (top) level.
  [[nodiscard]] counter get_bytes_counter() const noexcept;
  /// Allocations of the current (top) level.
  [[nodiscard]] counter get_allocations_counter() const noexcept;

  /// Starts a new level of zeroed counters; returns the (bytes, allocations) of the level below.
  std::pair<counter, counter> push_counters();
  /// Ends the top level and returns its (bytes, allocations). Throws rmm::logic_error when only
  /// the base level is left.
  std::pair<counter, counter> pop_counters();

 private:
  friend detail::adaptor_resource<statistics_resource_adaptor, detail::statistics_state>;
  /// The adaptor's work, once for both orders.
  void* allocate_in(std::size_t bytes, detail::allocation_order order);
  void deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept;
};

}  // namespace rmm::mr
