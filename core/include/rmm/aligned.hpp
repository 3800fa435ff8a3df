#pragma once

#include <cstddef>
#include <cstdint>

namespace rmm {

/// Alignment every device allocation in rmm is guaranteed to have (the CUDA allocation alignment).
inline constexpr std::size_t CUDA_ALLOCATION_ALIGNMENT{256};

/// Alignment of `new` / `malloc` on the host.
inline constexpr std::size_t RMM_DEFAULT_HOST_ALIGNMENT{alignof(std::max_align_t)};

[[nodiscard]] constexpr bool is_pow2(std::size_t value) noexcept { return value != 0 && (value & (value - 1)) == 0; }

/// An alignment rmm accepts in `allocate`: a power of two. Whether a resource can honour values
/// above CUDA_ALLOCATION_ALIGNMENT is up to the resource (see device_memory_resource).
[[nodiscard]] constexpr bool is_supported_alignment(std::size_t alignment) noexcept { return is_pow2(alignment); }

/// Round `value` up to a multiple of `alignment` (a power of two).
[[nodiscard]] constexpr std::size_t align_up(std::size_t value, std::size_t alignment) noexcept
{
  return (value + (alignment - 1)) & ~(alignment - 1);
}

/// Round `value` down to a multiple of `alignment` (a power of two).
[[nodiscard]] constexpr std::size_t align_down(std::size_t value, std::size_t alignment) noexcept
{
  return value & ~(alignment - 1);
}

[[nodiscard]] constexpr bool is_aligned(std::size_t value, std::size_t alignment) noexcept
{
  return value == align_down(value, alignment);
}

[[nodiscard]] inline bool is_pointer_aligned(void const* ptr,
                                             std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept
{
  return is_aligned(reinterpret_cast<std::uintptr_t>(ptr), alignment);
}

}  // namespace rmm
