// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/detail/adaptor_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>

namespace rmm::mr {

namespace detail {
struct limiting_state;
}

/**
 * Caps the memory allocated through it: an allocation that would take the total (each size
 * rounded up to `alignment`) past `allocation_limit` throws rmm::out_of_memory without reaching
 * the upstream. The cap holds exactly under any number of threads. Before it refuses, it calls
 * the before-growth hook (rmm/mr/before_growth.hpp) while that gives memory back: memory freed but
 * waiting to be reusable is not what the program holds.
 *
 * Copies share the count and compare equal.
 */
class limiting_resource_adaptor final
  : public detail::adaptor_resource<limiting_resource_adaptor, detail::limiting_state> {
 public:
  /**
   * @brief Caps what is allocated from `upstream` through this adaptor at `allocation_limit` bytes.
   *
   * @param upstream the resource memory comes from
   * @param allocation_limit the most bytes outstanding at once, counted after rounding
   * @param alignment each allocation is counted rounded up to a multiple of it; a power of two
   * @throws rmm::logic_error unless `alignment` is a power of two
   */
  limiting_resource_adaptor(any_device_resource upstream,
                            std::size_t allocation_limit,
                            std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT);

  /**
   * @brief Bytes allocated now (each allocation rounded up to the alignment).
   *
   * @return the bytes counted against the limit
   */
  [[nodiscard]] std::size_t get_allocated_bytes() const noexcept;
  /**
   * @brief The cap given at construction.
   *
   * @return the limit in bytes
   */
  [[nodiscard]] std::size_t get_allocation_limit() const noexcept;

 private:
  friend detail::adaptor_resource<limiting_resource_adaptor, detail::limiting_state>;
  /// The adaptor's work, once for both orders.
  void* allocate_in(std::size_t bytes, detail::allocation_order order);
  void deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept;
};

static_assert(cuda::mr::resource_with<limiting_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
