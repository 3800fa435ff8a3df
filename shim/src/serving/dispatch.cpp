// SPDX-License-Identifier: Apache-2.0
#include "serving/dispatch.hpp"

#include "driver/contexts.hpp"
#include "devices.hpp"
#include "driver/real_driver.hpp"
#include "settings.hpp"
#include "state.hpp"
#include "stacks/thread_cache.hpp"

#include "mr/detail/stream_identity.hpp"

#include <rmm/aligned.hpp>
#include <rmm/config/error.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>

namespace rmm::shim {

own_work_scope::own_work_scope() noexcept
{
  if (!state().streams.capturing()) [[likely]] { return; }
  auto const* driver = real();
  relaxed_           = driver != nullptr && driver->exchange_capture_mode(&previous_) == CUDA_SUCCESS;
}

own_work_scope::~own_work_scope()
{
  if (relaxed_) { (void)real()->exchange_capture_mode(&previous_); }
}

namespace {

/// Whether the shim may serve a call at all; counts the reason when it may not.
bool active() noexcept
{
  if (passing_through()) { return false; }  // the inner half of a call passed through: not counted twice
  if (!settings().enabled) {
    state().count.passed(pass_reason::disabled);
    return false;
  }
  if (exiting()) {
    state().count.passed(pass_reason::exiting);
    return false;
  }
  return true;
}

/// Exit marks itself once the program runs: registered after the CUDA runtime's own exit handler
/// (the runtime registers it when it initialises), this one runs before it.
void arm_exit_marker()
{
  static std::atomic<bool> armed{false};
  if (armed.load(std::memory_order_relaxed)) [[likely]] { return; }
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] { mark_exiting(); });
    armed.store(true, std::memory_order_relaxed);
  });
}

/// Set at load by the layer above (when_a_stack_is_built).
std::atomic<void (*)() noexcept> stack_built_callback{nullptr};
/// A stack was built: one built before the layer above handed its function down calls it then.
std::atomic<bool> a_stack_was_built{false};

/// The stack of `device` for tag `region`. A stack that cannot be built (the configuration asks for
/// more than the device has, the device refuses it) stops the program: it never runs unmanaged by
/// surprise.
rmm::mr::any_device_resource& stack_of(shim_state& s, int device, region_id region)
{
  if (auto* built = s.stacks.find(device, region)) [[likely]] { return *built; }
  try {
    bind_library_to_real_driver();
    auto& stack = s.stacks.get(device, region);
    a_stack_was_built.store(true, std::memory_order_release);
    if (auto const built = stack_built_callback.load(std::memory_order_acquire)) { built(); }
    return stack;
  } catch (std::exception const& e) {
    std::fflush(stdout);
    fmt::print(stderr,
               "rmm shim: cannot build the resource stack of device {}: {}\n"
               "rmm shim: stopping the program; fix the configuration, or set RMM_SHIM_ENABLED=false to run it "
               "without the shim\n",
               device, e.what());
    std::fflush(stderr);
    std::_Exit(78);  // EX_CONFIG
  }
}

/// Times one call in counters::time_sample_rate.
class sampled_timer {
 public:
  explicit sampled_timer(int device) noexcept : device_{device}, timing_{counters::should_time()}
  {
    if (timing_) { start_ = std::chrono::steady_clock::now(); }
  }
  ~sampled_timer()
  {
    if (!timing_) { return; }
    auto const elapsed = std::chrono::steady_clock::now() - start_;
    state().count.timed(device_, static_cast<std::uint64_t>(std::chrono::nanoseconds{elapsed}.count()));
  }
  sampled_timer(sampled_timer const&)            = delete;
  sampled_timer& operator=(sampled_timer const&) = delete;

 private:
  int device_;
  bool timing_;
  std::chrono::steady_clock::time_point start_{};
};

using rmm::mr::detail::log_action;

/// Writes one event to `device`'s log, when the log is on. `stream` is the order the call was
/// served in: a stream, or null for the host's order (a free that waits in an epoch).
void log_event(shim_state& s,
               int device,
               log_action action,
               void const* ptr,
               std::size_t bytes,
               CUstream stream) noexcept
{
  if (auto* log = s.stacks.log(device)) [[unlikely]] { log->record(action, ptr, bytes, rmm::cuda_stream_view{stream}); }
}

/// Where a block the shim handed out lies in its stack: the stack's pointer and size (a kept or
/// deferred block is in these terms too).
kept_block stack_block(shim_state const& s, std::uintptr_t ptr, block_owner const& owner) noexcept
{
  auto const alignment = s.stacks.alignment(owner.device);
  auto const bytes     = rmm::align_up(owner.size, alignment) + (owner.over_allocated ? alignment : 0);
  return {ptr - owner.offset, bytes, owner.device, owner.region};
}

/// A block the stack allocated for the program: the program's pointer and how it lies in the
/// stack's allocation.
struct aligned_block {
  void* ptr;
  std::uint16_t offset;
  bool over_allocated;
};

/// `bytes` from the stack, aligned as native cudaMalloc results are (device_stacks::alignment):
/// `allocate(n)` allocates n bytes, `release(p, n)` gives them back. The size is rounded up to the
/// alignment, which every sub-allocator then keeps: it cuts blocks at multiples of the sizes it is
/// asked for, from memory at least that aligned. A stack that does not (a fixed_size layer with an
/// odd block size) is asked for `alignment` bytes more, and the block starts inside.
template <class Allocate, class Release>
aligned_block allocate_aligned(std::size_t bytes, std::size_t alignment, Allocate&& allocate, Release&& release)
{
  if (bytes > rmm::mr::max_allocation_size) { return {allocate(bytes), 0, false}; }  // refused, with its reason
  auto const rounded = rmm::align_up(bytes, alignment);
  void* ptr          = allocate(rounded);
  if (rmm::is_pointer_aligned(ptr, alignment)) { return {ptr, 0, false}; }
  release(ptr, rounded);
  auto const larger = reinterpret_cast<std::uintptr_t>(allocate(rounded + alignment));
  auto const offset = rmm::align_up(larger, alignment) - larger;
  return {reinterpret_cast<void*>(larger + offset), static_cast<std::uint16_t>(offset), true};
}

/// A buffer id no allocation of the process had (block_owner::buffer_id): the driver's ids count up
/// from 1, these from 2^63. Each thread takes them from the shared counter 4096 at a time.
std::uint64_t next_buffer_id() noexcept
{
  static std::atomic<std::uint64_t> next_batch{0};
  constexpr std::uint64_t batch   = 4096;
  thread_local std::uint64_t next = 0;
  thread_local std::uint64_t end  = 0;
  if (next == end) [[unlikely]] {
    next = next_batch.fetch_add(batch, std::memory_order_relaxed);
    end  = next + batch;
  }
  return (std::uint64_t{1} << 63) | next++;
}

/// Records a block the stack handed out; gives it back if the record cannot be kept.
CUresult hand_out(shim_state& s,
                  aligned_block const& block,
                  std::size_t bytes,
                  int device,
                  region_id region,
                  block_kind kind,
                  CUdeviceptr* out,
                  rmm::mr::any_device_resource& stack,
                  CUstream stream,
                  block_source source = block_source::stack)
{
  auto const address = reinterpret_cast<std::uintptr_t>(block.ptr);
  block_owner const owner{bytes, device, kind, block.over_allocated, region, block.offset, next_buffer_id()};
  try {
    s.ownership.insert(address, owner);
  } catch (std::bad_alloc const&) {
    auto const in_stack = stack_block(s, address, owner);
    auto* const start   = reinterpret_cast<void*>(in_stack.ptr);
    if (kind == block_kind::synchronous) {
      stack.deallocate_sync(start, in_stack.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
    } else {
      stack.deallocate(cuda::stream_ref{stream}, start, in_stack.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
    }
    s.count.failed_allocation(device);
    log_event(s, device, log_action::allocate_failure, nullptr, bytes, stream);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *out = static_cast<CUdeviceptr>(address);
  s.count.served_allocation(device, bytes, source);
  log_event(s, device, log_action::allocate, block.ptr, bytes, stream);
  return CUDA_SUCCESS;
}

/// allocate_aligned in `stream`'s order (none: memory any stream may use at once).
aligned_block allocate_once(rmm::mr::any_device_resource& stack,
                            std::size_t bytes,
                            std::size_t alignment,
                            std::optional<CUstream> stream)
{
  if (!stream) {
    return allocate_aligned(
      bytes, alignment, [&](std::size_t n) { return stack.allocate_sync(n, rmm::CUDA_ALLOCATION_ALIGNMENT); },
      [&](void* p, std::size_t n) { stack.deallocate_sync(p, n, rmm::CUDA_ALLOCATION_ALIGNMENT); });
  }
  cuda::stream_ref const order{*stream};
  return allocate_aligned(
    bytes, alignment, [&](std::size_t n) { return stack.allocate(order, n, rmm::CUDA_ALLOCATION_ALIGNMENT); },
    [&](void* p, std::size_t n) { stack.deallocate(order, p, n, rmm::CUDA_ALLOCATION_ALIGNMENT); });
}

/// allocate_once, tried again when the device's memory sat in physical allocations the program
/// released (physical_cache.hpp): those go back to the device first.
aligned_block allocate_on(rmm::mr::any_device_resource& stack,
                          int device,
                          std::size_t bytes,
                          std::size_t alignment,
                          std::optional<CUstream> stream)
{
  try {
    return allocate_once(stack, bytes, alignment, stream);
  } catch (rmm::out_of_memory const&) {
    if (release_cached_physical_memory(device) == 0) { throw; }
  }
  return allocate_once(stack, bytes, alignment, stream);
}

/// What a failed allocation returns: out of memory whatever the cause, never an exception across the
/// C boundary; the program recovers by freeing memory.
CUresult failed(shim_state& s, int device, std::size_t bytes, CUstream stream, std::exception const& e)
{
  s.count.failed_allocation(device);
  log_event(s, device, log_action::allocate_failure, nullptr, bytes, stream);
  if (settings().verbose) { fmt::print(stderr, "rmm shim: allocation on device {} failed: {}\n", device, e.what()); }
  return CUDA_ERROR_OUT_OF_MEMORY;
}

/// The stream an asynchronous call means: stream 0 through a per-thread flavour is the calling
/// thread's default stream.
CUstream resolve_stream(CUstream stream, stream_flavour flavour) noexcept
{
  return (flavour == stream_flavour::per_thread && stream == nullptr) ? CU_STREAM_PER_THREAD : stream;
}

/// Whether `stream` is capturing; nothing when the driver does not know it (a destroyed stream),
/// whose call is then the real function's, with the error a program gets without the shim.
std::optional<bool> capturing(CUstream stream) noexcept
{
  CUstreamCaptureStatus status{CU_STREAM_CAPTURE_STATUS_NONE};
  if (real()->stream_is_capturing(stream, &status) != CUDA_SUCCESS) { return std::nullopt; }
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/// How much is known of a freed pointer before its record is searched.
enum class pointer_check : bool {
  none,      ///< nothing yet: the range of the shim's blocks is checked first
  in_range,  ///< the hook found it inside that range (foreign_free): the record is searched at once
};

/// Takes a block the shim handed out back from the ownership record and counts its free; nothing
/// (and the reason counted) when the shim is off or the pointer is not one of its blocks.
[[gnu::always_inline]] inline std::optional<block_owner> claim_block(shim_state& s,
                                                                     CUdeviceptr ptr,
                                                                     pointer_check known = pointer_check::none) noexcept
{
  if (!settings().enabled) {
    s.count.passed(pass_reason::disabled);
    return std::nullopt;
  }
  auto const address = static_cast<std::uintptr_t>(ptr);
  auto const owner =
    known == pointer_check::in_range ? s.ownership.extract_recorded(address) : s.ownership.extract(address);
  if (!owner) {
    s.count.passed(pass_reason::foreign_pointer);
    return std::nullopt;
  }
  s.count.served_free(owner->device, owner->size);
  return owner;
}

/// Whether cudaMalloc and cudaFree on `device` are served in the legacy default stream's order:
/// never while a stream captures (nothing may be ordered on the legacy stream then); otherwise
/// always under the stream-ordered policy, and under the device-wide one while no non-blocking
/// stream of the device can still run work submitted before now, since every other stream then
/// synchronizes with the legacy stream (legacy_order_suffices checks captures itself).
bool in_legacy_order(shim_state& s, int device) noexcept
{
  if (settings().free_policy == free_policy::stream_ordered) { return !s.streams.capturing(); }
  return s.deferred.legacy_order_suffices(device);
}

/// Whether cudaMalloc on `device` takes memory in the legacy stream's order although the device has
/// non-blocking streams: every block there is fenced for them (deferred_frees.hpp).
bool in_fenced_legacy_order(shim_state& s, int device) noexcept
{
  return settings().free_policy == free_policy::device_wide && s.deferred.fenced_reuse(device);
}

/// The host waits for the legacy stream's work so far (the rare race of an allocation with the
/// creation of the device's first non-blocking stream, or with the start of a capture).
void wait_for_legacy_stream() noexcept { (void)real()->stream_synchronize(CU_STREAM_LEGACY); }

/// Which way a block was taken in the legacy stream's order.
enum class legacy_take : bool {
  unfenced,  ///< while no non-blocking stream could still run work (legacy_order_suffices)
  fenced     ///< while some could, from memory fenced for them (fenced_reuse)
};

/// After a block was taken in the legacy stream's order, while old work on it may still run there
/// (its free was ordered there, or the stack made the legacy stream wait for another stream's
/// work on it): the device's non-blocking streams must not overtake that work. Watched streams wait
/// behind a fence recorded before their next work. Without the watch, each got a fence when it was
/// created or when the block's epoch closed; only a stream created since the order was checked
/// may lack it, and then the host waits for the legacy stream.
void after_legacy_take(shim_state& s, int device, legacy_take how) noexcept
{
  if (settings().free_policy != free_policy::device_wide || s.streams.non_blocking(device) == 0) [[likely]] { return; }
  if (s.streams.watching()) {
    if (!s.streams.fence_later_work(device)) { wait_for_legacy_stream(); }  // a capture began meanwhile
    return;
  }
  if (how == legacy_take::unfenced) { wait_for_legacy_stream(); }
}

/// Gives a freed block to its stack as cudaFree promises: in the legacy stream's order when that
/// order suffices (`legacy_order`), else through the device's epochs.
void return_to_stack(shim_state& s, kept_block const& block, bool legacy_order) noexcept
{
  auto* stack = s.stacks.find(block.device, block.region);
  if (stack == nullptr) { return; }  // never: the block came from a built stack
  own_work_scope const own_work;
  if (block.region != 0 && !legacy_order) [[unlikely]] {
    // The epochs give blocks back to the untagged stack: a tagged block waits for the device's
    // work here instead, as a native cudaFree does.
    scoped_device_context const on_device{block.device};
    (void)real()->ctx_synchronize();
    stack->deallocate_sync(reinterpret_cast<void*>(block.ptr), block.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
    return;
  }
  if (legacy_order) {
    // Ordered on the legacy stream of the block's device, which waits for every blocking stream.
    scoped_device_context const on_device{block.device};
    stack->deallocate(cuda::stream_ref{CU_STREAM_LEGACY}, reinterpret_cast<void*>(block.ptr), block.size,
                      rmm::CUDA_ALLOCATION_ALIGNMENT);
    return;
  }
  try {
    s.deferred.defer(block.device, block.ptr, block.size);
  } catch (...) {  // no memory for the epoch's bookkeeping: the stack's own host-ordered free
    stack->deallocate_sync(reinterpret_cast<void*>(block.ptr), block.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
}

/// Gives a freed block to its stack in the order that suffices now.
void give_back(shim_state& s, kept_block const& block) noexcept
{
  return_to_stack(s, block, in_legacy_order(s, block.device));
}

/// Gives a block a thread kept to its stack, as the free that kept it would have: in the legacy
/// stream's order, which sufficed then, unless a capture is in progress now (nothing may be
/// ordered there). A non-blocking stream created since waited for the legacy work queued before
/// it, which includes the block's last use.
void give_back_kept_block(shim_state& s, kept_block const& block) noexcept
{
  return_to_stack(s, block, !s.streams.capturing());
}

/// Gives back what the calling thread keeps on `device`, before a request its block cannot serve.
void give_back_kept(shim_state& s, int device) noexcept
{
  if (auto const kept = thread_cache::take_any(device)) [[unlikely]] { give_back_kept_block(s, *kept); }
}

void give_back_swept(kept_block const& block) noexcept { give_back_kept_block(state(), block); }

/// The device whose stack serves an allocation request, or nothing (the reason counted) for a
/// null out-pointer or zero bytes, or a current context that is not a device's primary one.
std::optional<int> device_to_serve(shim_state& s, CUdeviceptr const* out, std::size_t bytes) noexcept
{
  if (out == nullptr || bytes == 0) {
    s.count.passed(pass_reason::null_or_empty);
    return std::nullopt;
  }
  auto const device = current_primary_device();
  if (!device) { s.count.passed(pass_reason::other_context); }
  return device;
}

/// Enters the pause gate to allocate under tag `region`, waiting while the process or the tag is
/// paused; nothing when the wait timed out.
std::optional<pause_gate::pass> enter_to_allocate(shim_state& s, region_id region) noexcept
{
  std::optional<std::chrono::steady_clock::time_point> deadline;  // one for the whole wait, however many pauses
  for (;;) {
    bool tag_paused = false;
    {
      auto pass = s.pause.gate.enter();
      if (pass.inside() && !s.regions.paused(region)) [[likely]] {
        if (deadline) { s.pause.count_waited(false); }
        return std::optional<pause_gate::pass>{std::move(pass)};
      }
      tag_paused = pass.inside();
    }  // out of the gate while waiting: a resume closes it
    if (!deadline) { deadline = std::chrono::steady_clock::now() + std::chrono::seconds{settings().pause_timeout}; }
    bool const resumed = tag_paused ? s.regions.wait_for_resume(region, *deadline) : s.pause.wait_for_resume(*deadline);
    if (!resumed) {
      s.pause.count_waited(true);
      return std::nullopt;
    }
  }
}

/// Enters the pause gate to free `block`; nothing when the process is paused and the block is held
/// for the resume instead.
std::optional<pause_gate::pass> enter_to_free(shim_state& s, kept_block const& block) noexcept
{
  for (;;) {
    auto pass = s.pause.gate.enter();
    if (pass.inside()) [[likely]] {
      // A tag is paused and resumed only while the gate is closed: held here, it stays paused.
      if (block.region != 0 && s.regions.hold_free(block)) [[unlikely]] { return std::nullopt; }
      return std::optional<pause_gate::pass>{std::move(pass)};
    }
    if (s.pause.hold_free(block)) { return std::nullopt; }
  }
}

/// An allocation that waited for the resume longer than the `pause_timeout` setting allows.
CUresult paused_too_long(shim_state& s, int device, std::size_t bytes, CUstream stream) noexcept
{
  s.count.failed_allocation(device);
  log_event(s, device, log_action::allocate_failure, nullptr, bytes, stream);
  if (settings().verbose) {
    fmt::print(stderr, "rmm shim: an allocation of {} bytes on device {} waited {} s for the process to resume\n",
               bytes, device, settings().pause_timeout);
  }
  return CUDA_ERROR_OUT_OF_MEMORY;
}

}  // namespace

std::optional<CUresult> serve_allocation(CUdeviceptr* out, std::size_t bytes)
{
  if (!active()) { return std::nullopt; }
  auto& s           = state();
  auto const device = device_to_serve(s, out, bytes);
  if (!device) { return std::nullopt; }
  auto const region = current_region();
  auto const pass   = enter_to_allocate(s, region);
  if (!pass) { return paused_too_long(s, *device, bytes, nullptr); }
  bool const legacy_order = in_legacy_order(s, *device);
  if (legacy_order && region == 0) {
    // Kept in the stack's terms: its size is the request's, rounded up to the alignment.
    auto const alignment = s.stacks.alignment(*device);
    if (auto const kept = bytes <= thread_cache::max_bytes
                            ? thread_cache::take(*device, rmm::align_up(bytes, alignment))
                            : std::nullopt) {
      // The block this thread freed last, of this size: reused in the order the stack would have.
      sampled_timer const timer{*device};
      own_work_scope const own_work;
      after_legacy_take(s, *device, legacy_take::unfenced);
      return hand_out(s, {reinterpret_cast<void*>(*kept), 0, false}, bytes, *device, region, block_kind::stream_ordered,
                      out, *s.stacks.find(*device), CU_STREAM_LEGACY, block_source::kept);
    }
  }
  give_back_kept(s, *device);
  arm_exit_marker();
  own_work_scope const own_work;  // whatever the stack calls never comes back into the shim
  auto& stack = stack_of(s, *device, region);
  sampled_timer const timer{*device};
  auto const alignment           = s.stacks.alignment(*device);
  bool const fenced_legacy_order = !legacy_order && in_fenced_legacy_order(s, *device);
  CUstream const order           = legacy_order || fenced_legacy_order ? CU_STREAM_LEGACY : nullptr;
  try {
    if (legacy_order) {
      auto const block = allocate_on(stack, *device, bytes, alignment, CU_STREAM_LEGACY);
      after_legacy_take(s, *device, legacy_take::unfenced);
      return hand_out(s, block, bytes, *device, region, block_kind::stream_ordered, out, stack, CU_STREAM_LEGACY);
    }
    if (fenced_legacy_order) {
      // Every block of the legacy stream's order is safe for the non-blocking streams too: their
      // fences wait for the legacy work its old owner queued (deferred_frees.hpp).
      auto const block = allocate_on(stack, *device, bytes, alignment, CU_STREAM_LEGACY);
      if (!s.deferred.fenced_reuse(*device)) {
        (void)real()->ctx_synchronize();  // a cudaFreeAsync meanwhile may have put an unfenced block there
      }
      after_legacy_take(s, *device, legacy_take::fenced);
      return hand_out(s, block, bytes, *device, region, block_kind::stream_ordered, out, stack, CU_STREAM_LEGACY);
    }
    auto const block = allocate_on(stack, *device, bytes, alignment, std::nullopt);
    return hand_out(s, block, bytes, *device, region, block_kind::synchronous, out, stack, nullptr);
  } catch (std::exception const& e) {
    return failed(s, *device, bytes, order, e);
  }
}

std::optional<CUresult> serve_free(CUdeviceptr ptr)
{
  if (ptr == 0) {
    if (!passing_through()) { state().count.passed(pass_reason::null_or_empty); }
    return std::nullopt;
  }
  if (passing_through()) { return std::nullopt; }
  auto& s          = state();
  auto const owner = claim_block(s, ptr, pointer_check::in_range);  // the hook checked it (foreign_free)
  if (!owner) { return std::nullopt; }
  if (exiting()) { return CUDA_SUCCESS; }  // dropped with the process: no CUDA call during exit
  sampled_timer const timer{owner->device};
  // A block from cudaMallocAsync freed with cudaFree makes the same promise: device-wide.
  bool const legacy_order = in_legacy_order(s, owner->device);
  log_event(s, owner->device, log_action::free, reinterpret_cast<void*>(ptr), owner->size,
            legacy_order ? CU_STREAM_LEGACY : nullptr);
  auto const block = stack_block(s, static_cast<std::uintptr_t>(ptr), *owner);
  auto const pass  = enter_to_free(s, block);
  if (!pass) { return CUDA_SUCCESS; }  // held for the resume
  if (s.exports.any() && s.exports.hold_freed(static_cast<std::uintptr_t>(ptr), block)) [[unlikely]] {
    return CUDA_SUCCESS;  // another process has it open: reused once the last one closed it
  }
  if (legacy_order && !owner->over_allocated && owner->region == 0 && s.stacks.keeps_frees(owner->device)) {
    // Kept for this thread's next allocation of the same size; what it displaces goes back.
    if (auto const back = thread_cache::keep(block)) { give_back_kept_block(s, *back); }
    return CUDA_SUCCESS;
  }
  return_to_stack(s, block, legacy_order);
  return CUDA_SUCCESS;
}

void when_a_stack_is_built(void (*built)() noexcept) noexcept
{
  stack_built_callback.store(built, std::memory_order_release);
  if (a_stack_was_built.load(std::memory_order_acquire)) { built(); }
}

void give_back_at_thread_end(kept_block const& block) noexcept
{
  if (!settings().enabled || exiting()) { return; }  // dropped with the process: no CUDA call during exit
  auto& s         = state();
  auto const pass = enter_to_free(s, block);
  if (pass) { give_back_kept_block(s, block); }
}

void give_back_held_free(kept_block const& block) noexcept
{
  if (!settings().enabled || exiting()) { return; }
  auto& s = state();
  if (block.region != 0 && s.regions.hold_free(block)) { return; }  // its tag is still paused
  give_back(s, block);
}

std::size_t give_back_kept_blocks(int device) noexcept
{
  if (!settings().enabled || exiting()) { return 0; }
  return thread_cache::sweep(device, give_back_swept);
}

std::size_t release_free_memory(int device) noexcept
{
  if (!settings().enabled || exiting()) { return 0; }
  auto const pass = state().pause.gate.enter();
  if (!pass.inside()) { return 0; }  // paused: the stacks hold no device memory
  return release_free_memory_at_rest(device);
}

bool following_physical_memory() noexcept { return settings().enabled && settings().physical_cache; }

bool caching_physical_memory() noexcept { return following_physical_memory() && !exiting() && !passing_through(); }

std::size_t release_cached_physical_memory(int device) noexcept
{
  if (!following_physical_memory()) { return 0; }
  std::size_t bytes = 0;
  try {
    for (auto const& cached : state().physical.drain(device)) {
      if (real()->mem_release(cached.owner) == CUDA_SUCCESS) { bytes += cached.bytes; }
    }
  } catch (...) {  // no memory for the list: nothing was taken out of the cache
  }
  return bytes;
}

std::size_t release_free_memory_at_rest(int device) noexcept
{
  if (!settings().enabled || exiting()) { return 0; }
  auto& s                   = state();
  auto const physical_bytes = release_cached_physical_memory(device);
  if (!s.stacks.any(device)) { return physical_bytes; }
  (void)give_back_kept_blocks(device);  // into the stack first, then released with it
  own_work_scope const own_work;
  scoped_device_context const on_device{device};
  std::size_t bytes = 0;
  try {
    while (s.deferred.pending_bytes(device) > 0 && s.deferred.reclaim(device, reclaim_wait::for_one_epoch) > 0) {}
    bytes = s.stacks.release(device);
  } catch (...) {  // the bytes given back so far
  }
  return physical_bytes + bytes;
}

std::optional<CUresult> serve_async_allocation(CUdeviceptr* out,
                                               std::size_t bytes,
                                               CUstream stream,
                                               stream_flavour flavour,
                                               pool_request pool)
{
  if (!active()) { return std::nullopt; }
  auto& s           = state();
  auto const device = device_to_serve(s, out, bytes);
  if (!device) { return std::nullopt; }
  if (pool == pool_request::device_current &&
      s.program_pool[static_cast<std::size_t>(*device)].load(std::memory_order_relaxed)) {
    s.count.passed(pass_reason::program_pool);
    return std::nullopt;
  }
  stream                = resolve_stream(stream, flavour);
  auto const in_capture = capturing(stream);
  if (!in_capture || *in_capture) {
    s.count.passed(in_capture ? pass_reason::stream_capture : pass_reason::unknown_stream);
    return std::nullopt;
  }
  auto const region = current_region();
  auto const pass   = enter_to_allocate(s, region);
  if (!pass) { return paused_too_long(s, *device, bytes, stream); }
  give_back_kept(s, *device);
  arm_exit_marker();
  own_work_scope const own_work;
  auto& stack = stack_of(s, *device, region);
  sampled_timer const timer{*device};
  try {
    auto const block = allocate_on(stack, *device, bytes, s.stacks.alignment(*device), stream);
    return hand_out(s, block, bytes, *device, region, block_kind::stream_ordered, out, stack, stream);
  } catch (std::exception const& e) {
    return failed(s, *device, bytes, stream, e);
  }
}

std::optional<CUresult> serve_async_free(CUdeviceptr ptr, CUstream stream, stream_flavour flavour)
{
  if (ptr == 0 || passing_through()) { return std::nullopt; }
  auto& s = state();
  stream  = resolve_stream(stream, flavour);
  // Asked before the block is claimed: on a stream the driver does not know nothing is freed, as
  // without the shim, and the block stays the program's for a free that works.
  auto const in_capture = settings().enabled && !exiting() ? capturing(stream) : std::optional<bool>{false};
  if (!in_capture) {
    s.count.passed(pass_reason::unknown_stream);
    return std::nullopt;
  }
  if (*in_capture) {
    // A graph cannot free memory allocated outside it: the driver refuses its own such frees
    // (CUDA_ERROR_INVALID_VALUE on an H200) and refuses the shim's blocks alike, which it does not
    // know. The block stays the program's.
    s.count.passed(pass_reason::stream_capture);
    return std::nullopt;
  }
  auto const owner = claim_block(s, ptr);
  if (!owner) { return std::nullopt; }
  if (exiting()) { return CUDA_SUCCESS; }
  sampled_timer const timer{owner->device};
  own_work_scope const own_work;
  log_event(s, owner->device, log_action::free, reinterpret_cast<void*>(ptr), owner->size, stream);
  auto const block = stack_block(s, static_cast<std::uintptr_t>(ptr), *owner);
  auto const pass  = enter_to_free(s, block);
  if (!pass) { return CUDA_SUCCESS; }                  // held for the resume
  s.deferred.note_stream_ordered_free(owner->device);  // before the block can be taken in the legacy order
  if (s.exports.any() && s.exports.hold_freed(static_cast<std::uintptr_t>(ptr), block)) [[unlikely]] {
    return CUDA_SUCCESS;  // another process has it open: reused once the last one closed it
  }
  s.stacks.find(owner->device, owner->region)
    ->deallocate(cuda::stream_ref{stream}, reinterpret_cast<void*>(block.ptr), block.size,
                 rmm::CUDA_ALLOCATION_ALIGNMENT);
  return CUDA_SUCCESS;
}

void adjust_memory_info(std::size_t* free, std::size_t* total) noexcept
{
  if (free == nullptr || total == nullptr || passing_through() || !settings().enabled || exiting()) { return; }
  if (state().pause.gate.closed()) { return; }  // paused: the driver's figure is the truth
  auto const device = current_primary_device();
  if (!device) { return; }
  auto& s = state();
  try {
    std::size_t unused = s.deferred.pending_bytes(*device) + thread_cache::kept_bytes(*device);
    if (auto const stats = s.stacks.statistics(*device)) { unused += stats->free_bytes; }
    if (following_physical_memory()) { unused += s.physical.cached_bytes(*device); }  // released: free to it
    *free = std::min(*total, *free + unused);
  } catch (...) {  // statistics only lock; leave the driver's answer alone if that ever fails
  }
}

std::optional<CUresult> serve_address_range(CUdeviceptr* base, std::size_t* size, CUdeviceptr ptr)
{
  if (passing_through() || !settings().enabled || ptr == 0) { return std::nullopt; }
  auto const block = state().ownership.find_containing(static_cast<std::uintptr_t>(ptr));
  if (!block) { return std::nullopt; }
  // The block the program was given, not the pool's mapping around it.
  if (base != nullptr) { *base = static_cast<CUdeviceptr>(block->first); }
  if (size != nullptr) { *size = block->second.size; }
  return CUDA_SUCCESS;
}

void adjust_pointer_attribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) noexcept
{
  if (data == nullptr || ptr == 0 || passing_through() || !settings().enabled) { return; }
  auto& s = state();
  if (s.ownership.surely_foreign(static_cast<std::uintptr_t>(ptr))) { return; }
  std::optional<std::pair<std::uintptr_t, block_owner>> block;
  try {
    block = s.ownership.find_containing(static_cast<std::uintptr_t>(ptr));
  } catch (...) {
    return;
  }
  if (!block) { return; }
  auto const& [start, owner] = *block;
  // As for memory of its own cudaMalloc: the block is the allocation.
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: *static_cast<CUdeviceptr*>(data) = start; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: *static_cast<std::size_t*>(data) = owner.size; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *static_cast<unsigned long long*>(data) = owner.buffer_id; break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: *static_cast<unsigned long long*>(data) = 0; break;
    default: break;
  }
}

bool is_served_memory(CUdeviceptr ptr) noexcept
{
  if (ptr == 0 || passing_through() || !settings().enabled) { return false; }
  auto& s = state();
  if (s.ownership.surely_foreign(static_cast<std::uintptr_t>(ptr))) { return false; }
  try {
    return s.ownership.find_containing(static_cast<std::uintptr_t>(ptr)).has_value();
  } catch (...) {
    return false;
  }
}

std::optional<CUresult> serve_ipc_export(CUipcMemHandle* handle, CUdeviceptr ptr)
{
  if (passing_through() || !settings().enabled || ptr == 0) { return std::nullopt; }
  auto& s = state();
  std::optional<std::pair<std::uintptr_t, block_owner>> block;
  try {
    block = s.ownership.find_containing(static_cast<std::uintptr_t>(ptr));
  } catch (...) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (!block) { return std::nullopt; }
  // A stack without a sub-allocator hands out whole driver allocations: those export correctly.
  if (!s.stacks.statistics(block->second.device)) { return std::nullopt; }
  auto const pass = enter_to_allocate(s, block->second.region);  // a paused block has no memory to share: wait
  if (!pass) { return CUDA_ERROR_NOT_READY; }
  own_work_scope const own_work;
  try {
    return s.exports.export_block(block->first, block->second.size, block->second.device, &give_back_exported, handle);
  } catch (...) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
}

std::optional<CUresult> serve_ipc_open(CUdeviceptr* out, CUipcMemHandle const& handle, unsigned int flags)
{
  if (passing_through() || !settings().enabled) { return std::nullopt; }
  own_work_scope const own_work;
  try {
    return state().imports.open(out, handle, flags);
  } catch (...) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
}

std::optional<CUresult> serve_ipc_close(CUdeviceptr ptr)
{
  if (passing_through() || !settings().enabled || ptr == 0) { return std::nullopt; }
  own_work_scope const own_work;
  return state().imports.close(ptr);
}

void give_back_exported(kept_block const& block) noexcept
{
  if (!settings().enabled || exiting()) { return; }
  auto& s         = state();
  auto const pass = enter_to_free(s, block);
  if (!pass) { return; }  // held for the resume
  own_work_scope const own_work;
  give_back(s, block);
}

void note_unwatched_entry_point(char const* name, int version, char const* how) noexcept
{
  if (!settings().enabled) { return; }
  std::string why;
  try {
    why = version > 0 ? fmt::format("{} (ABI {}) was handed out through {} unwrapped", name, version, how)
                      : fmt::format("{} was handed out through {} unwrapped", name, how);
  } catch (...) {  // out of host memory: the watch ends all the same
  }
  state().streams.lose_sight(std::move(why));
}

void note_stream_created(CUstream stream, unsigned int flags) noexcept
{
  if (!settings().enabled) { return; }
  CUdevice device{};
  if (real()->ctx_get_device(&device) != CUDA_SUCCESS) { return; }
  try {
    state().streams.created(stream, flags, device);
  } catch (...) {  // out of host memory: the stream gets no event of its own (legacy still covers blocking work)
  }
  // The stacks key their memory by the driver's stream id; a stream whose creation and destruction
  // the shim sees has it looked up once, not at every allocation and free on it. Only streams of
  // a primary context: the stacks serve no other, and their streams end with their context, which
  // the shim does not watch.
  if (!current_primary_device()) { return; }
  try {
    bind_library_to_real_driver();             // the library's first driver call may be this one
    rmm::mr::detail::remember_stream(stream);  // CUstream and cudaStream_t are one type
  } catch (...) {
    // Not remembered: its id is asked for at every use instead.
  }
}

void note_stream_destroyed(CUstream stream) noexcept
{
  if (!settings().enabled) { return; }
  rmm::mr::detail::forget_stream(stream);  // before its handle can be reused
  own_work_scope const own_work;
  state().streams.destroyed(stream);
}

namespace {

/// How the shim names a capture: the per-thread default stream is another stream in each thread.
std::pair<CUstream, std::uint64_t> capture_key(CUstream stream, stream_flavour flavour) noexcept
{
  if (flavour == stream_flavour::per_thread && stream == nullptr) { stream = CU_STREAM_PER_THREAD; }
  static std::atomic<std::uint64_t> next_thread{1};
  thread_local std::uint64_t const thread = next_thread.fetch_add(1, std::memory_order_relaxed);
  return {stream, stream == CU_STREAM_PER_THREAD ? thread : 0};
}

}  // namespace

void note_capture_beginning(CUstream stream, stream_flavour flavour) noexcept
{
  if (!settings().enabled) { return; }
  auto const [handle, thread] = capture_key(stream, flavour);
  state().streams.capture_noted(handle, thread);
}

void note_capture_ended(CUstream stream, stream_flavour flavour) noexcept
{
  if (!settings().enabled) { return; }
  auto const [handle, thread] = capture_key(stream, flavour);
  CUstreamCaptureStatus status{CU_STREAM_CAPTURE_STATUS_NONE};
  bool const still =
    real()->stream_is_capturing(handle, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
  state().streams.capture_checked(handle, thread, still ? capture_state::ongoing : capture_state::over);
}

void note_passed_by(pass_reason reason, std::size_t bytes) noexcept
{
  if (!settings().enabled || exiting()) {
    state().count.passed(!settings().enabled ? pass_reason::disabled : pass_reason::exiting);
    return;
  }
  state().count.passed_by(reason, bytes);
}

void note_physical_allocation_call(physical_call call, std::uint64_t nanoseconds) noexcept
{
  if (!settings().enabled || exiting()) { return; }
  state().count.physical_allocation_call(call, nanoseconds);
}

void note_device_mem_pool_set(CUdevice device, CUmemoryPool pool) noexcept
{
  if (!settings().enabled || !has_device_slot(device)) { return; }
  CUmemoryPool default_pool{};
  if (real()->device_get_default_mem_pool(&default_pool, device) != CUDA_SUCCESS) { return; }
  state().program_pool[static_cast<std::size_t>(device)].store(pool != default_pool, std::memory_order_relaxed);
}

void note_device_reset(CUdevice device) noexcept
{
  if (!settings().enabled || !has_device_slot(device)) { return; }
  detail::device_resets_made.fetch_add(1, std::memory_order_acq_rel);
  auto& s = state();
  // Not while a pause or resume is under way; while paused, the device's held frees go with it.
  std::lock_guard operation{s.pause.operation()};
  s.pause.forget_device(device);
  s.regions.forget_device(device);
  // Kept blocks first: a thread's next allocation must not take one.
  (void)thread_cache::sweep(device, [](kept_block const&) noexcept {});
  s.stacks.forget(device);
  // A tag paused on its own whose memory was all on this device is paused no more: its memory went
  // with the reset, and its allocations must not wait for a resume that has nothing to map.
  for (std::size_t r = 1; r <= s.regions.count(); ++r) {
    auto const region = static_cast<region_id>(r);
    if (!s.regions.paused(region)) { continue; }
    bool still_paused = false;
    for (int other = 0; other < max_devices; ++other) { still_paused = still_paused || s.stacks.paused(other, region); }
    if (!still_paused) {
      for (auto const& block : s.regions.mark_resumed(region)) { give_back_held_free(block); }
    }
  }
  auto const [blocks, bytes] = s.ownership.forget_device(device);
  s.deferred.forget_device(device);
  s.streams.forget_device(device);
  s.exports.forget_device(device);  // their memory is gone: their handles open nothing any more
  s.program_pool[static_cast<std::size_t>(device)].store(false, std::memory_order_relaxed);
  s.default_pools.forget(device);
  rmm::mr::detail::forget_every_stream();
  s.count.device_reset(device, blocks, bytes);
}

}  // namespace rmm::shim
