// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where every wrapped call is decided: served by the device's resource stack, or passed through to
// the real function (and why). The hooks only translate between their API and these calls.

#include "driver/real_driver.hpp"
#include "report/report.hpp"
#include "settings.hpp"
#include "state.hpp"
#include "stacks/thread_cache.hpp"

#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

namespace rmm::shim {

/// cuMemAlloc / cudaMalloc: memory any stream may use when the call returns. nullopt: pass the
/// call through to the real function.
[[nodiscard]] std::optional<CUresult> serve_allocation(CUdeviceptr* out, std::size_t bytes);

/// cuMemFree / cudaFree, after foreign_free (below) said no. nullopt: not the shim's pointer (or
/// null): pass it through.
[[nodiscard]] std::optional<CUresult> serve_free(CUdeviceptr ptr);

namespace detail {
inline thread_local bool passing_through_flag = false;  // constant-initialized: no guard to reach it
}  // namespace detail

/// True while this thread runs the real function of a call the shim passed through: a call
/// passed through at the runtime level reaches the driver-level wrappers, which must not serve it
/// a second time.
[[nodiscard]] inline bool& passing_through() noexcept { return detail::passing_through_flag; }

/// Before serve_free, in the hook itself: true (and counted) for a free the shim surely did not
/// serve, a non-null pointer outside every block it ever handed out, which then goes to the real
/// function at once. The cheapest pass-through there is: other libraries' frees cost a few loads.
[[nodiscard]] inline bool foreign_free(CUdeviceptr ptr) noexcept
{
  if (ptr == 0 || passing_through() || !settings().enabled) { return false; }
  auto& s = state();
  if (!s.ownership.surely_foreign(static_cast<std::uintptr_t>(ptr))) { return false; }
  s.count.passed(pass_reason::foreign_pointer);
  return true;
}

/// Which pool a stream-ordered allocation asks for: the device's current one (cuMemAllocAsync),
/// or its default one by name (cuMemAllocFromPoolAsync, default_pools.hpp), which is served even
/// while the program made a pool of its own the device's current one.
enum class pool_request : bool { device_current, named_default };

/// cuMemAllocAsync / cudaMallocAsync on `stream` (in the per-thread flavour, stream 0 means the
/// calling thread's stream).
[[nodiscard]] std::optional<CUresult> serve_async_allocation(CUdeviceptr* out,
                                                             std::size_t bytes,
                                                             CUstream stream,
                                                             stream_flavour flavour,
                                                             pool_request pool = pool_request::device_current);

/// cuMemFreeAsync / cudaFreeAsync.
[[nodiscard]] std::optional<CUresult> serve_async_free(CUdeviceptr ptr, CUstream stream, stream_flavour flavour);

/// A thread that kept a block (thread_cache.hpp) ended: the block goes back to its stack, unless
/// the process is exiting.
void give_back_at_thread_end(kept_block const& block) noexcept;

/// What to do when a stack is built, at once when one was built already (the layer above hands it
/// down: start the control socket, once, so that a process that allocates device memory can be
/// asked about it).
void when_a_stack_is_built(void (*stack_built)() noexcept) noexcept;

/// Gives every block the program's threads keep on `device` (every device for -1) back to its
/// stack: before a stack grows, and when the program asks for memory back. Returns the bytes.
std::size_t give_back_kept_blocks(int device) noexcept;

/// Gives every free byte of `device`'s stack back to the device (kept blocks and frees still
/// waiting for their streams first). Returns the bytes; none while the process is paused.
std::size_t release_free_memory(int device) noexcept;
/// Whether the shim follows the program's physical allocations (physical_cache.hpp): the shim is on
/// and the `physical_cache` setting too. Off, their calls pass through untouched.
[[nodiscard]] bool following_physical_memory() noexcept;
/// Whether this cuMemCreate may be answered from, and recorded for, the physical cache: followed,
/// and the program's own call (not exiting, not inside a call passed through).
[[nodiscard]] bool caching_physical_memory() noexcept;
/// Gives the physical allocations the program released on `device`, and the cache kept, back to
/// the driver; returns their bytes.
std::size_t release_cached_physical_memory(int device) noexcept;
/// release_free_memory for a caller that keeps every served call out (a pause).
std::size_t release_free_memory_at_rest(int device) noexcept;
/// A block freed while the process was paused goes back to its stack (at the resume).
void give_back_held_free(kept_block const& block) noexcept;

/// cuMemGetInfo / cudaMemGetInfo after the real call filled `free` and `total`: adds what the
/// current device's stack holds unused and what waits to become reusable.
void adjust_memory_info(std::size_t* free, std::size_t* total) noexcept;

/// cuMemGetAddressRange: the block the shim handed out that holds `ptr`, or nullopt (pass through).
[[nodiscard]] std::optional<CUresult> serve_address_range(CUdeviceptr* base, std::size_t* size, CUdeviceptr ptr);

/// cuPointerGetAttribute(s), after the real call answered: for a pointer into a block the shim
/// handed out, the attributes that describe the allocation describe the block (its start and size,
/// a buffer id of its own, no shareable handle types), as for memory of a native cudaMalloc.
void adjust_pointer_attribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) noexcept;

/// Whether `ptr` lies in a block the shim handed out (cuMemRetainAllocationHandle refuses those,
/// as it refuses native cudaMalloc memory: the physical allocation under them is the pool's).
[[nodiscard]] bool is_served_memory(CUdeviceptr ptr) noexcept;

/// cuIpcGetMemHandle / cudaIpcGetMemHandle of memory the shim handed out from a pool: a shim handle
/// of the block (ipc_channel.hpp), since the driver's would share the pool's memory from its start;
/// nullopt for other memory, and for a stack without a sub-allocator, whose blocks are whole driver
/// allocations.
[[nodiscard]] std::optional<CUresult> serve_ipc_export(CUipcMemHandle* handle, CUdeviceptr ptr);
/// cuIpcOpenMemHandle of a shim handle, and cuIpcCloseMemHandle of what it gave; nullopt for the
/// driver's own handles and addresses.
[[nodiscard]] std::optional<CUresult> serve_ipc_open(CUdeviceptr* out,
                                                     CUipcMemHandle const& handle,
                                                     unsigned int flags);
[[nodiscard]] std::optional<CUresult> serve_ipc_close(CUdeviceptr ptr);
/// An exported block the program freed, once the last process that opened it closed it.
void give_back_exported(kept_block const& block) noexcept;

/// The program was handed the driver's own `name` (at `version`, 0 for dlsym; found through `how`),
/// which may submit work the shim cannot see: the watch of the non-blocking streams ends.
void note_unwatched_entry_point(char const* name, int version, char const* how) noexcept;

/// What the program did with its streams and pools, which the free policy and the async path
/// need to know.
void note_stream_created(CUstream stream, unsigned int flags) noexcept;
void note_stream_destroyed(CUstream stream) noexcept;
/// Around the program's stream captures: counted from just before one begins until the stream
/// no longer captures.
void note_capture_beginning(CUstream stream, stream_flavour flavour) noexcept;
void note_capture_ended(CUstream stream, stream_flavour flavour) noexcept;
void note_device_mem_pool_set(CUdevice device, CUmemoryPool pool) noexcept;
/// After the program reset `device`'s primary context (cudaDeviceReset): everything the shim keeps
/// for it describes memory, streams and events the reset destroyed, and is forgotten. The next
/// allocation builds a new stack; a free of a pointer from before gets the driver's answer.
void note_device_reset(CUdevice device) noexcept;
namespace detail {
inline std::atomic<unsigned> device_resets_made{0};  // counted by note_device_reset
}  // namespace detail

/// How many device resets the program made: a thread whose runtime started before the last one
/// lets the runtime bring its context back before the shim serves it again. Read inline: every
/// cudaMalloc the shim serves asks.
[[nodiscard]] inline unsigned device_resets() noexcept
{
  return detail::device_resets_made.load(std::memory_order_acquire);
}

class passing_through_scope {
 public:
  passing_through_scope() noexcept : flag_{passing_through()}, previous_{std::exchange(flag_, true)} {}
  ~passing_through_scope() { flag_ = previous_; }
  passing_through_scope(passing_through_scope const&)            = delete;
  passing_through_scope& operator=(passing_through_scope const&) = delete;

 private:
  bool& flag_;  // the thread's flag, looked up once
  bool previous_;
};

/// The shim's own CUDA work for the program (its stack, its epochs, its fences): no wrapper serves
/// what it calls, and while a stream of the process captures, the calling thread is in the relaxed
/// capture mode for it. In the global mode (from any thread) and the thread-local one (from the
/// capturing thread), querying or waiting for an event or a stream, and allocating with cuMemAlloc
/// or on another stream, would end the capture as invalid; in the relaxed mode they do not
/// (docs/shim.md, "Stream capture").
class own_work_scope {
 public:
  own_work_scope() noexcept;
  ~own_work_scope();
  own_work_scope(own_work_scope const&)            = delete;
  own_work_scope& operator=(own_work_scope const&) = delete;

 private:
  passing_through_scope passing_;
  CUstreamCaptureMode previous_{CU_STREAM_CAPTURE_MODE_RELAXED};
  bool relaxed_{false};
};

/// Runs `real` (the real function of a call the shim does not serve) with the shim out of the way.
template <class Call>
auto pass_through(Call&& real)
{
  passing_through_scope const scope;
  return real();
}

/// Counts a successful allocation of `bytes` the shim does not serve by design (managed memory, a
/// pool the program names, memory it maps itself) under `reason`, unless it is the inner half of a
/// call already passed through.
void note_passed_by(pass_reason reason, std::size_t bytes) noexcept;

/// Runs `real` (such an allocation of `bytes`) with the shim out of the way, and counts it when it
/// succeeded.
template <class Call>
CUresult passed_by(pass_reason reason, std::size_t bytes, Call&& real)
{
  bool const inner  = passing_through();
  auto const result = pass_through(std::forward<Call>(real));
  if (result == CUDA_SUCCESS && !inner) { note_passed_by(reason, bytes); }
  return result;
}

/// Counts a successful cuMemCreate or cuMemRelease the program made itself, and how long it took.
void note_physical_allocation_call(physical_call call, std::uint64_t nanoseconds) noexcept;

/// Runs `real`, such a call, with the shim out of the way, timed; counted when it succeeded,
/// unless it is the inner half of a call already passed through. A physical allocation of `bytes`
/// is also memory that passed the shim by (pass_reason::virtual_memory).
template <class Call>
CUresult timed_physical_allocation_call(physical_call call, std::size_t bytes, Call&& real)
{
  bool const inner  = passing_through();
  auto const start  = std::chrono::steady_clock::now();
  auto const result = pass_through(std::forward<Call>(real));
  if (result == CUDA_SUCCESS && !inner) {
    auto const took = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    note_physical_allocation_call(call, static_cast<std::uint64_t>(took.count()));
    if (call == physical_call::create) { note_passed_by(pass_reason::virtual_memory, bytes); }
  }
  return result;
}

}  // namespace rmm::shim
