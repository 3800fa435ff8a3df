// SPDX-License-Identifier: Apache-2.0
#pragma once

// How many host threads the staged copy (staged_copy.hpp) runs. A header of its own, free of CUDA,
// so that the benchmark of a pause's host side measures with the same number.

#include <algorithm>
#include <thread>

namespace rmm::mr::detail {

/// Host threads for the host's side of the copies: one a core, 2 to 16. Into fresh host memory (a
/// first pause) the copy runs at the rate the kernel hands out zeroed pages, which grows with the
/// threads; and each thread's two buffers keep more of the link's copies in flight. On a 16-core
/// H100 host, 16 threads paused and resumed 20 GiB in 0.77 of the time 8 took.
inline unsigned staged_copy_host_threads()
{
  return std::clamp(std::thread::hardware_concurrency(), 2U, 16U);  // 0 when it cannot tell: 2
}

}  // namespace rmm::mr::detail
