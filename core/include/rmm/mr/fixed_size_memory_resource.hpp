// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/mr/detail/suballocator_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>

namespace rmm::mr {

/**
 * Allocates blocks of one fixed size in O(1): each allocation of at most block_size bytes takes a
 * whole block. Requests larger than a block throw rmm::bad_alloc.
 *
 * Blocks come from upstream `blocks_to_preallocate` at a time (the first batch at construction).
 * Freed blocks are reused on their stream at once and by other streams after an event, as in
 * pool_memory_resource. Copies share the blocks.
 */
class fixed_size_memory_resource final
  : public detail::suballocator_resource<fixed_size_memory_resource, detail::fixed_block_store> {
 public:
  static constexpr std::size_t default_block_size            = std::size_t{1} << 20;  ///< the default block size: 1 MiB
  static constexpr std::size_t default_blocks_to_preallocate = 128;  ///< blocks per request to the upstream

  /**
   * @brief Reserves the first `blocks_to_preallocate` blocks of `block_size` bytes from `upstream`.
   *
   * @param upstream the resource blocks come from, shared by this resource
   * @param block_size the size of every block; rounded up to a multiple of 256
   * @param blocks_to_preallocate how many blocks each request to the upstream takes
   * @throws rmm::logic_error for a block size or block count of 0
   * @throws rmm::out_of_memory when a block (rounded up to 256 bytes) or `blocks_to_preallocate` of
   * them together exceed max_allocation_size, or when the upstream cannot provide the first batch
   * @throws rmm::bad_alloc when the upstream fails for another reason
   * @throws rmm::cuda_error when there is no usable device or a CUDA call fails
   */
  explicit fixed_size_memory_resource(any_device_resource upstream,
                                      std::size_t block_size            = default_block_size,
                                      std::size_t blocks_to_preallocate = default_blocks_to_preallocate);

  /**
   * @brief The block size: the largest request this resource serves.
   *
   * @return the requested block size rounded up to a multiple of 256
   */
  [[nodiscard]] std::size_t get_block_size() const noexcept;
};

static_assert(cuda::mr::resource_with<fixed_size_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
