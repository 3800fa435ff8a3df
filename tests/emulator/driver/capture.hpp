// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a stream capture forbids the rest of the process, as an H200 (driver 580) enforces it:
// - "potentially unsafe" calls (querying or waiting for an event or a stream, cuMemAlloc and
//   cuMemFree, stream-ordered allocation on a stream that is not capturing) are refused with
//   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the captures that forbid them end as invalid:
//   every global-mode capture of the context whoever calls, and a thread-local-mode capture when
//   the thread that began it calls. A thread in the relaxed mode (cuThreadExchangeStreamCaptureMode)
//   may make them;
// - cuCtxSynchronize ends every capture of its context as invalid, in every mode;
// - querying a capturing stream (cuStreamQuery, cuStreamGetId) ends its own capture as invalid;
// - work on the legacy stream ends the captures of blocking streams (context.cpp).
// tests/shim/conformance/capture_legality.cpp printed the table this follows.

#include "common.hpp"

#include <cstdint>
#include <memory>

namespace rmm_emu {

class Context;
class Stream;

/// The calling thread's capture mode, which cuThreadExchangeStreamCaptureMode swaps.
CUstreamCaptureMode& thread_capture_mode();

/// A capture of `s` began in `mode` on the calling thread; it ended (or was abandoned).
void capture_began(std::shared_ptr<Stream> const& s, CUstreamCaptureMode mode);
void capture_ended(Stream const& s);

/// A capture spreads as on a GPU: a stream that waits for an event recorded in a capture joins
/// it, and ends with it. An event recorded on `s`; `waiter` made to wait for `event`.
void event_recorded(void const* event, Stream const& s);
void stream_waited(std::shared_ptr<Stream> const& waiter, void const* event);
/// Before the capture that began on `origin` ends: its joined streams end too, and the capture is
/// invalid when any of them was invalidated.
void capture_ending(Stream& origin);
/// The capture sequence `s` takes part in, 0 when none: memory allocated in one can be freed in it
/// only.
[[nodiscard]] std::uint64_t capture_sequence(Stream const& s);

/// Whether the calling thread may make a potentially unsafe call in `ctx` now. When not, the
/// captures that forbid it are invalidated, and the caller returns CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.
[[nodiscard]] bool unsafe_call_allowed(Context const& ctx);

/// Ends every capture of `ctx` as invalid; true when there was one.
bool invalidate_captures(Context const& ctx);

}  // namespace rmm_emu
