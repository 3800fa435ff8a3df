// SPDX-License-Identifier: Apache-2.0
// Where each byte range was last prefetched (cuMemPrefetchAsync), for cuMemRangeGetAttribute's
// LAST_PREFETCH_LOCATION: managed memory, and host memory under pageable memory access. Recorded
// when the prefetch is queued; forgotten when the allocation is freed. Callers hold memory_mutex().
#pragma once

#include "common.hpp"

#include <cstdint>

namespace rmm_emu {

void note_prefetch(std::uint64_t addr, std::uint64_t bytes, CUmemLocation location);
void forget_prefetches(std::uint64_t addr, std::uint64_t bytes);

// The location every byte of the range was last prefetched to; type CU_MEM_LOCATION_TYPE_INVALID
// when a byte never was, or the bytes went to different places (the driver's cudaInvalidDeviceId).
CUmemLocation last_prefetch_location(std::uint64_t addr, std::uint64_t bytes);

}  // namespace rmm_emu
