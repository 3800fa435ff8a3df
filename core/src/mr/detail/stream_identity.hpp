#pragma once

// A stream handle is not a stream's identity: the driver hands a destroyed stream's handle to the
// next stream created, and cudaStreamPerThread names a different stream in every thread. The
// driver's stream id (cuStreamGetId) is unique for the life of the context, so memory kept per
// stream is kept per id.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace rmm::mr::detail {

/// The driver's id of `stream` on `device` (which must be current). The ids of the legacy and the
/// calling thread's per-thread default stream are asked once per thread and device; a user
/// stream's on every call, since its handle may have been reused. Throws rmm::cuda_error for a
/// handle the driver does not know (a destroyed stream).
[[nodiscard]] std::uint64_t stream_id(cudaStream_t stream, int device);

/// A number that identifies the calling thread and is never reused (std::thread::id is).
[[nodiscard]] std::uint64_t thread_token() noexcept;

}  // namespace rmm::mr::detail
