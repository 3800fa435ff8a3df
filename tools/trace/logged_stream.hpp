// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a stream handle in an allocation log means when the log is replayed.

#include <rmm/cuda_stream_view.hpp>

#include <cstdint>
#include <optional>

namespace rmm::trace {

/// The built-in stream a logged handle names: 0 the default stream, 0x1 `cudaStreamLegacy` and 0x2
/// `cudaStreamPerThread` (their fixed handle values). Any other handle was a stream the program
/// created: nullopt, and the replay gives it a stream of its own.
[[nodiscard]] std::optional<rmm::cuda_stream_view> builtin_stream(std::uintptr_t logged) noexcept;

}  // namespace rmm::trace
