// SPDX-License-Identifier: Apache-2.0
#pragma once

// The units free stores and the suballocator exchange: an address range, and the sorted starts of
// the chunks (upstream allocations, or pieces of the region) that free memory never merges across.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rmm::mr::detail {

struct memory_range {
  std::uintptr_t start{};
  std::size_t size{};
};

using chunk_starts = std::vector<std::uintptr_t>;

}  // namespace rmm::mr::detail
