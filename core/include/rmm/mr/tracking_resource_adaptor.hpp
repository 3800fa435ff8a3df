// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stack_trace.hpp>
#include <rmm/mr/detail/adaptor_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <string>

namespace rmm::mr {

namespace detail {
struct tracking_state;
}

/**
 * Remembers every outstanding allocation (its size and, optionally, the stack that made it) to
 * find leaks and bad frees. Safe to use from many threads.
 *
 * Frees are checked against the record: a pointer it did not hand out (or already took back) is
 * reported on the rmm logger at error level and NOT passed to the upstream, which could corrupt
 * it; a free with the wrong size is reported and passed on with the size that was allocated.
 * Zero-byte allocations are recorded one by one even when the upstream gives them all the same
 * address (CUDA gives null to every one), so each may be freed once.
 *
 * Copies share the record and compare equal.
 */
class tracking_resource_adaptor final
  : public detail::adaptor_resource<tracking_resource_adaptor, detail::tracking_state> {
 public:
  /// What the adaptor records about one outstanding allocation.
  struct allocation_info {
    std::size_t allocation_size{};  ///< the size requested, in bytes
    /// The call stack of the allocation when constructed with capture_stacks, else null (RMM's
    /// name; shared so that snapshots can copy it).
    std::shared_ptr<rmm::detail::stack_trace const> strace;
  };

  /**
   * @brief Tracks what is allocated from `upstream` through this adaptor.
   *
   * @param upstream the resource memory comes from
   * @param capture_stacks record the call stack of each allocation (costs a few microseconds each)
   */
  explicit tracking_resource_adaptor(any_device_resource upstream, bool capture_stacks = false);

  /**
   * @brief A snapshot of the outstanding allocations, by address.
   *
   * Zero-byte allocations sharing an address (with each other or with a block) appear once;
   * get_outstanding_allocations_str lists each.
   *
   * @return each address with its size and, if captured, its stack
   */
  [[nodiscard]] std::map<void*, allocation_info> get_outstanding_allocations() const;
  /**
   * @brief Bytes outstanding now.
   *
   * @return the sum of the sizes of the outstanding allocations
   */
  [[nodiscard]] std::size_t get_allocated_bytes() const noexcept;
  /**
   * @brief Frees refused so far because the pointer was unknown.
   *
   * @return the number of such frees
   */
  [[nodiscard]] std::size_t get_unknown_frees() const noexcept;
  /**
   * @brief Frees so far whose size was not the allocation's (passed on with the allocated size).
   *
   * @return the number of such frees
   */
  [[nodiscard]] std::size_t get_size_mismatches() const noexcept;

  /**
   * @brief A readable report: a summary line, then one line per allocation (with its stack if
   * captured).
   *
   * @return the report; empty when nothing is outstanding, as RMM's
   */
  [[nodiscard]] std::string get_outstanding_allocations_str() const;
  /// @brief Writes get_outstanding_allocations_str() to the rmm logger at debug level.
  void log_outstanding_allocations() const;

 private:
  friend detail::adaptor_resource<tracking_resource_adaptor, detail::tracking_state>;
  /// The adaptor's work, once for both orders.
  void* allocate_in(std::size_t bytes, detail::allocation_order order);
  void deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept;
};

static_assert(cuda::mr::resource_with<tracking_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
