// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

namespace rmm {

/// Alignment every device allocation in rmm is guaranteed to have (the CUDA allocation alignment).
inline constexpr std::size_t CUDA_ALLOCATION_ALIGNMENT{256};

/// Alignment of `new` / `malloc` on the host.
inline constexpr std::size_t RMM_DEFAULT_HOST_ALIGNMENT{alignof(std::max_align_t)};

/**
 * @brief Whether `value` is a power of two.
 *
 * @param value the number to test
 * @return true for 1, 2, 4, ...; false for 0 and every other value
 */
[[nodiscard]] constexpr bool is_pow2(std::size_t value) noexcept { return value != 0 && (value & (value - 1)) == 0; }

/**
 * @brief An alignment rmm accepts in `allocate`: a power of two.
 *
 * Whether a resource can honour values above CUDA_ALLOCATION_ALIGNMENT is up to the resource (see
 * device_memory_resource).
 *
 * @param alignment the alignment in bytes
 * @return true when `alignment` is a power of two
 */
[[nodiscard]] constexpr bool is_supported_alignment(std::size_t alignment) noexcept { return is_pow2(alignment); }

/**
 * @brief Rounds `value` up to a multiple of `alignment` (a power of two).
 *
 * @param value the number to round
 * @param alignment a power of two
 * @return the smallest multiple of `alignment` not below `value` (wraps to 0 past SIZE_MAX)
 */
[[nodiscard]] constexpr std::size_t align_up(std::size_t value, std::size_t alignment) noexcept
{
  return (value + (alignment - 1)) & ~(alignment - 1);
}

/**
 * @brief Rounds `value` down to a multiple of `alignment` (a power of two).
 *
 * @param value the number to round
 * @param alignment a power of two
 * @return the largest multiple of `alignment` not above `value`
 */
[[nodiscard]] constexpr std::size_t align_down(std::size_t value, std::size_t alignment) noexcept
{
  return value & ~(alignment - 1);
}

/**
 * @brief Whether `value` is a multiple of `alignment` (a power of two).
 *
 * @param value the number to test
 * @param alignment a power of two
 * @return true when `value` is a multiple of `alignment`
 */
[[nodiscard]] constexpr bool is_aligned(std::size_t value, std::size_t alignment) noexcept
{
  return value == align_down(value, alignment);
}

/**
 * @brief Whether `ptr` is aligned to `alignment` (a power of two).
 *
 * @param ptr the address to test
 * @param alignment a power of two, by default CUDA_ALLOCATION_ALIGNMENT
 * @return true when the address is a multiple of `alignment`
 */
[[nodiscard]] inline bool is_pointer_aligned(void const* ptr,
                                             std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept
{
  return is_aligned(reinterpret_cast<std::uintptr_t>(ptr), alignment);
}

}  // namespace rmm
