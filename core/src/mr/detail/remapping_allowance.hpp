// SPDX-License-Identifier: Apache-2.0
#pragma once

// How many bytes a remapping pool may still move to the end of its range instead of mapping new
// memory.
//
// Moving a granule costs about what mapping one does (an unmap, a map and an access call), and the
// host may first wait for the work its requester queued. A program whose every step leaves holes
// would have the pool move granules at every step (a ViT's step took 1.41 times as long). Allowing
// moves only while the bytes moved stay within a multiple of the bytes mapped bounds what moving
// costs over the pool's life by what growing cost; past that the pool maps new memory, as it does
// without remapping. A program that fragments early and briefly (CuPy's mix of sorts, FFTs and
// solvers) moves about three times what it maps, and then holds 1.04 times its peak use instead of
// 1.14.

#include <atomic>
#include <cstddef>

namespace rmm::mr::detail {

class remapping_allowance {
 public:
  /// The bytes that may move per byte mapped.
  static constexpr std::size_t moved_per_mapped = 4;

  /// The pool mapped `bytes` more. Writers hold the pool's growth lock.
  void mapped(std::size_t bytes) noexcept { mapped_.store(mapped_.load(relaxed) + bytes, relaxed); }
  /// The pool moved `bytes`.
  void moved(std::size_t bytes) noexcept { moved_.store(moved_.load(relaxed) + bytes, relaxed); }

  /// The bytes that may move now.
  [[nodiscard]] std::size_t left() const noexcept
  {
    auto const allowed = mapped_.load(relaxed) * moved_per_mapped;
    auto const moved   = moved_.load(relaxed);
    return allowed > moved ? allowed - moved : 0;
  }

  /// The bytes moved so far (readable without the lock).
  [[nodiscard]] std::size_t moved_bytes() const noexcept { return moved_.load(relaxed); }

 private:
  static constexpr auto relaxed = std::memory_order_relaxed;
  std::atomic<std::size_t> mapped_{0};
  std::atomic<std::size_t> moved_{0};
};

}  // namespace rmm::mr::detail
