// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/error.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>
#include <limits>
#include <string>

namespace rmm::detail {

/// Bytes taken by `count` elements of `T`, for `container` ("device_uvector", ...). Throws
/// rmm::invalid_argument when they overflow std::size_t (as RMM does) and rmm::out_of_memory when
/// they exceed rmm::mr::max_allocation_size, before the multiplication can wrap around into a
/// small allocation.
template <class T>
[[nodiscard]] std::size_t element_bytes(std::size_t count, char const* container)
{
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(T)) [[unlikely]] {
    throw rmm::invalid_argument{std::string{container} + ": " + std::to_string(count) + " elements of " +
                                std::to_string(sizeof(T)) +
                                " bytes overflow std::size_t. A count this large comes from a computation that "
                                "wrapped around, such as n - 1 with n == 0: check how it was computed"};
  }
  if (count > rmm::mr::max_allocation_size / sizeof(T)) [[unlikely]] {
    throw rmm::out_of_memory{std::string{container} + " cannot allocate " + std::to_string(count) + " elements of " +
                             std::to_string(sizeof(T)) + " bytes: no allocation can be larger than " +
                             std::to_string(rmm::mr::max_allocation_size) +
                             " bytes (PTRDIFF_MAX). A count this large comes from a computation that wrapped "
                             "around, such as n - 1 with n == 0: check how it was computed"};
  }
  return count * sizeof(T);
}

}  // namespace rmm::detail
