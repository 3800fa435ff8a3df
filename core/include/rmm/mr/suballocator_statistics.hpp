// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace rmm::mr {

/// What a sub-allocating resource (pool, arena, fixed_size, binning) holds, at one moment.
struct suballocator_statistics {
  std::size_t reserved_bytes{};       ///< held from upstream
  std::size_t peak_reserved_bytes{};  ///< the most ever held from upstream at once
  std::size_t allocated_bytes{};      ///< handed out and not yet freed (rounded to the resource's granularity)
  std::size_t free_bytes{};           ///< reserved_bytes - allocated_bytes
  std::size_t free_blocks{};          ///< number of separate free ranges
  std::size_t largest_free_block{};   ///< the largest request that can be met without growing
  std::size_t upstream_chunks{};      ///< separate allocations held from upstream
  std::size_t stream_arenas{};        ///< streams (and, for the arena resource, threads) with an arena of their own
  std::size_t moved_bytes{};          ///< idle free memory a remapping pool moved to its end instead of mapping more

  /**
   * @brief How scattered the free memory is: 1 - largest_free_block / free_bytes.
   *
   * @return 0 when all free memory is one block (or nothing is free), near 1 when it is scattered
   * in small holes
   */
  [[nodiscard]] double fragmentation() const noexcept
  {
    return free_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(largest_free_block) / static_cast<double>(free_bytes);
  }
};

}  // namespace rmm::mr
