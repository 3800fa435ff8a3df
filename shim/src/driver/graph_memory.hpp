// SPDX-License-Identifier: Apache-2.0
#pragma once

// The memory the driver keeps for CUDA graphs' own allocation nodes (cudaMallocAsync inside a
// capture, cudaGraphAddMemAllocNode): not the shim's, and not in its stacks. A graph's allocation
// holds nothing between launches, so what no launched graph uses can go back to the device at a
// pause, and the driver maps it again at the graph's next launch, at the same addresses.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rmm::shim {

struct graph_memory {
  std::size_t reserved_bytes{};  ///< mapped by the driver for graphs now
  std::size_t used_bytes{};      ///< of it, in allocations a graph made that are not freed yet
};

/// What the driver holds for graphs on `device`; nothing when it cannot say.
[[nodiscard]] std::optional<graph_memory> graph_memory_on(int device) noexcept;

/// Gives back to `device` the graph memory no launched graph uses (every graph's: the driver's
/// trim knows no owners); returns the bytes given back, nothing when the driver refused.
[[nodiscard]] std::optional<std::size_t> trim_graph_memory(int device) noexcept;

/// Trims the graph memory on each of `devices` for a pause; says what it gave back, what graphs'
/// live allocations still hold (a pause cannot move it) and where the driver refused, as a clause
/// to append to the pause's message (empty when no graph memory was there).
[[nodiscard]] std::string give_back_idle_graph_memory(std::vector<int> const& devices) noexcept;

}  // namespace rmm::shim
