// SPDX-License-Identifier: Apache-2.0
#pragma once

// Over-aligned host allocations from an allocator that knows no alignment (malloc, cudaMallocHost):
// the allocation is padded, the returned pointer is the first aligned address far enough in, and
// the distance back to what the allocator returned is kept in the word just before it.

#include <rmm/aligned.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rmm::detail {

/**
 * @brief `bytes` of host-accessible memory aligned to `alignment`, from `alloc`.
 *
 * @param bytes the size wanted
 * @param alignment a power of two
 * @param alloc callable taking a size and returning at least that many host-accessible bytes
 * @return the aligned pointer; give it to aligned_host_deallocate with the same bytes and alignment
 */
template <class Alloc>
[[nodiscard]] void* aligned_host_allocate(std::size_t bytes, std::size_t alignment, Alloc alloc)
{
  // Room for the alignment correction and, before the aligned address, the distance back.
  auto* const start      = static_cast<char*>(alloc(bytes + alignment + sizeof(std::size_t)));
  auto const earliest    = reinterpret_cast<std::uintptr_t>(start) + sizeof(std::size_t);
  auto* const aligned    = start + (align_up(earliest, alignment) - reinterpret_cast<std::uintptr_t>(start));
  std::size_t const back = static_cast<std::size_t>(aligned - start);
  std::memcpy(aligned - sizeof back, &back, sizeof back);
  return aligned;
}

/**
 * @brief Frees what aligned_host_allocate returned.
 *
 * @param ptr the aligned pointer (null: nothing to do)
 * @param bytes the size given to aligned_host_allocate (unused; kept for symmetry with it)
 * @param alignment the alignment given to aligned_host_allocate (unused, likewise)
 * @param dealloc callable freeing what `alloc` returned
 */
template <class Dealloc>
void aligned_host_deallocate(void* ptr,
                             [[maybe_unused]] std::size_t bytes,
                             [[maybe_unused]] std::size_t alignment,
                             Dealloc dealloc) noexcept
{
  if (ptr == nullptr) { return; }
  std::size_t back = 0;
  std::memcpy(&back, static_cast<char*>(ptr) - sizeof back, sizeof back);
  dealloc(static_cast<char*>(ptr) - back);
}

}  // namespace rmm::detail
