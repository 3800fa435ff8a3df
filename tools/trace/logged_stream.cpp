// SPDX-License-Identifier: Apache-2.0
#include "logged_stream.hpp"

#include <cuda_runtime_api.h>

namespace rmm::trace {

std::optional<rmm::cuda_stream_view> builtin_stream(std::uintptr_t logged) noexcept
{
  if (logged == 0) { return rmm::cuda_stream_view{}; }
  if (logged == reinterpret_cast<std::uintptr_t>(cudaStreamLegacy)) { return rmm::cuda_stream_legacy; }
  if (logged == reinterpret_cast<std::uintptr_t>(cudaStreamPerThread)) { return rmm::cuda_stream_per_thread; }
  return std::nullopt;
}

}  // namespace rmm::trace
