// SPDX-License-Identifier: Apache-2.0
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
  /// One statistic (bytes or allocations) of one level: now, at its peak, and in total.
  struct counter {
    std::int64_t value{0};  ///< outstanding now
    std::int64_t peak{0};   ///< highest `value` seen
    std::int64_t total{0};  ///< sum of everything ever added

    /**
     * @brief Adds `amount` to `value` and `total`, raising `peak` if `value` passes it.
     *
     * @param amount what was allocated
     * @return this counter
     */
    counter& operator+=(std::int64_t amount) noexcept;
    /**
     * @brief Subtracts `amount` from `value`.
     *
     * @param amount what was freed
     * @return this counter
     */
    counter& operator-=(std::int64_t amount) noexcept;
    /**
     * @brief Folds a counter measured on top of this one (a popped level) into this one.
     *
     * @param sub the counter of the level above
     */
    void add_counters_from_tracked_sub_block(counter const& sub) noexcept;
  };

  /**
   * @brief Counts what is allocated from `upstream` through this adaptor.
   *
   * @param upstream the resource memory comes from
   */
  explicit statistics_resource_adaptor(any_device_resource upstream);

  /**
   * @brief Bytes of the current (top) level.
   *
   * @return the bytes counter
   */
  [[nodiscard]] counter get_bytes_counter() const noexcept;
  /**
   * @brief Allocations of the current (top) level.
   *
   * @return the allocations counter
   */
  [[nodiscard]] counter get_allocations_counter() const noexcept;

  /**
   * @brief Starts a new level of zeroed counters.
   *
   * @return the (bytes, allocations) counters of the level below
   */
  std::pair<counter, counter> push_counters();
  /**
   * @brief Ends the top level, folding it into the level below.
   *
   * @return the (bytes, allocations) counters of the level ended
   * @throws std::out_of_range when only the base level is left (as RMM)
   */
  std::pair<counter, counter> pop_counters();

 private:
  friend detail::adaptor_resource<statistics_resource_adaptor, detail::statistics_state>;
  /// The adaptor's work, once for both orders.
  void* allocate_in(std::size_t bytes, detail::allocation_order order);
  void deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept;
};

static_assert(cuda::mr::resource_with<statistics_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
