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
struct aligned_state;
}

/**
 * Gives allocations of at least `alignment_threshold` bytes an alignment larger than the 256
 * bytes every resource guarantees (for instance 4 KiB for GPUDirect Storage), by allocating
 * `alignment - 256` extra bytes from the upstream and handing out the aligned address inside.
 * Smaller allocations pass straight through, and so do zero-byte ones: there is nothing to align,
 * and the upstream's answer for zero bytes is returned as it is.
 *
 * Copies share the table of adjusted addresses and compare equal.
 */
class aligned_resource_adaptor final
  : public detail::adaptor_resource<aligned_resource_adaptor, detail::aligned_state> {
 public:
  static constexpr std::size_t default_alignment_threshold = 0;  ///< default: every size gets the alignment

  /**
   * @brief Aligns allocations of at least `alignment_threshold` bytes from `upstream` to `alignment`.
   *
   * @param upstream the resource memory comes from
   * @param alignment a power of two; values up to 256 align nothing beyond what `upstream` gives
   * @param alignment_threshold the smallest size that gets `alignment` (default 0: every size)
   * @throws rmm::logic_error unless `alignment` is a power of two
   */
  explicit aligned_resource_adaptor(any_device_resource upstream,
                                    std::size_t alignment           = CUDA_ALLOCATION_ALIGNMENT,
                                    std::size_t alignment_threshold = default_alignment_threshold);

  /**
   * @brief The alignment large allocations get.
   *
   * @return the constructor's `alignment`, or CUDA_ALLOCATION_ALIGNMENT if that is larger
   */
  [[nodiscard]] std::size_t alignment() const noexcept;
  /**
   * @brief The smallest allocation size that gets alignment().
   *
   * @return the threshold in bytes
   */
  [[nodiscard]] std::size_t alignment_threshold() const noexcept;

 private:
  void* allocate_padded(std::size_t bytes, detail::allocation_order order);
  friend detail::adaptor_resource<aligned_resource_adaptor, detail::aligned_state>;
  /// The adaptor's work, once for both orders.
  void* allocate_in(std::size_t bytes, detail::allocation_order order);
  void deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept;
};

static_assert(cuda::mr::resource_with<aligned_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
