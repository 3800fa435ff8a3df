// SPDX-License-Identifier: Apache-2.0
#pragma once

// A stream handle is not a stream's identity: the driver hands a destroyed stream's handle to the
// next stream created, and cudaStreamPerThread names a different stream in every thread. The
// driver's stream id (cuStreamGetId) is unique for the life of the context, so memory kept per
// stream is kept per id.
//
// Asking costs a driver call on every operation on a user stream. The streams whose whole life is
// seen (rmm::cuda_stream, and so cuda_stream_pool; under the preload shim, every stream the program
// creates in a primary context) are asked once, when created: their ids are remembered until just
// before they are destroyed, so no other stream can carry their handle while the handle maps to
// their id. That holds as long as nothing unseen destroys them: a cudaStreamDestroy of an
// rmm::cuda_stream's handle is a double destroy, and a device reset ends every stream and every
// resource's memory alike.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

namespace rmm::mr::detail {

/// The driver's id of `stream` on `device` (which must be current). The ids of the legacy and the
/// calling thread's per-thread default stream are asked once per thread and device, a remembered
/// stream's once in its life, any other stream's on every call, since its handle may have been
/// reused. Throws rmm::cuda_error for a handle the driver does not know (a destroyed stream).
[[nodiscard]] std::uint64_t stream_id(cudaStream_t stream, int device);

/// Remembers the id of `stream`, just created by the caller, who calls forget_stream before
/// destroying it. Throws rmm::cuda_error when the driver does not know the stream.
void remember_stream(cudaStream_t stream);

/// Forgets a remembered stream's id: call it before the stream is destroyed. No effect on a stream
/// not remembered.
void forget_stream(cudaStream_t stream) noexcept;

/// Forgets every remembered stream, and the default streams' ids: a device reset destroyed the
/// streams without a cudaStreamDestroy (their handles may come back for new streams) and gives the
/// default streams new ids.
void forget_every_stream() noexcept;

/// The remembered id of `stream`, or nothing when it is not remembered.
[[nodiscard]] std::optional<std::uint64_t> remembered_id(cudaStream_t stream) noexcept;

/// A number that identifies the calling thread and is never reused (std::thread::id is).
[[nodiscard]] std::uint64_t thread_token() noexcept;

}  // namespace rmm::mr::detail
