#pragma once

#include <rmm/error.hpp>

#include <cstddef>
#include <limits>
#include <string>

namespace rmm::detail {

/// Bytes taken by `count` elements of `T`. Throws rmm::bad_alloc when that does not fit in
/// std::size_t, so a huge count never wraps around into a small allocation.
template <class T>
[[nodiscard]] std::size_t element_bytes(std::size_t count)
{
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(T)) [[unlikely]] {
    throw rmm::bad_alloc{std::to_string(count) + " elements of " + std::to_string(sizeof(T)) +
                         " bytes do not fit in std::size_t"};
  }
  return count * sizeof(T);
}

}  // namespace rmm::detail
