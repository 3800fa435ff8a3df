// SPDX-License-Identifier: Apache-2.0
// Stream-ordering safety of the stream-ordered sub-allocators (pool, arena, fixed_size, binning),
// decided from observed state instead of timing (see stream_gate.hpp). Each case holds the work of
// the stream that last used some memory behind a gate (it writes 0xAA there), lets another stream
// or thread take memory and write 0xBB to it, opens the gate and checks that 0xBB survived: the
// taker's write must land after the held write, whichever way the resource ordered it. The rules:
//   R1 memory freed on a stream is reused on that stream at once, without waiting;
//   R2 it moves to another stream only behind the freeing stream's earlier work (the taker waits
//      on an event recorded after the free, or the host waits for that work);
//   R3 memory reclaimed from every stream at once (the last resort, release()) is reused only
//      after all their work on it;
//   R4 an event covers only the frees made before it was recorded.

#include "program_streams.hpp"
#include "stream_gate.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/detail/resource_cast.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <thread>
#include <vector>

namespace rmm::test {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t block          = std::size_t{64} << 10;  // every request is a multiple of it
constexpr std::uint8_t held_value    = 0xAA;                   // written by work held behind a gate
constexpr std::uint8_t taker_value   = 0xBB;                   // written by whoever takes the memory next
constexpr std::size_t busy_blocks    = 96;                     // blocks a stream allocates; it frees every other one
constexpr std::size_t large_blocks   = 4;                      // one larger block (coalescing resources): only it fits
constexpr std::size_t reserve_blocks = 2;                      // left unallocated: serves the freeing stream's miss
constexpr std::size_t large_bytes    = large_blocks * block;

// ---- the resources -----------------------------------------------------------------------------------

struct resource_kind {
  char const* name;
  bool coalesces;  ///< serves any size, merging free neighbours (pool, arena); else one block size
  /// A resource holding exactly `blocks` blocks, all reserved up front, that never grows.
  rmm::mr::any_device_resource (*make)(std::size_t blocks);
};

rmm::mr::any_device_resource make_pool(std::size_t blocks)
{
  return rmm::mr::any_device_resource{
    rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, blocks * block, blocks * block}};
}

rmm::mr::any_device_resource make_arena(std::size_t blocks)
{
  return rmm::mr::any_device_resource{rmm::mr::arena_memory_resource{rmm::mr::cuda_memory_resource{}, blocks * block}};
}

rmm::mr::fixed_size_memory_resource bounded_fixed_size(std::size_t blocks)
{
  // The limit lets the first batch through and refuses any growth.
  return rmm::mr::fixed_size_memory_resource{
    rmm::mr::limiting_resource_adaptor{rmm::mr::cuda_memory_resource{}, blocks * block}, block, blocks};
}

rmm::mr::any_device_resource make_fixed_size(std::size_t blocks)
{
  return rmm::mr::any_device_resource{bounded_fixed_size(blocks)};
}

rmm::mr::any_device_resource make_binning(std::size_t blocks)
{
  rmm::mr::binning_memory_resource binning{rmm::mr::cuda_memory_resource{}, std::vector<std::size_t>{}};
  binning.add_bin(block, rmm::mr::any_device_resource{bounded_fixed_size(blocks)});
  return rmm::mr::any_device_resource{std::move(binning)};
}

resource_kind const pool_kind{"pool", true, make_pool};
resource_kind const arena_kind{"arena", true, make_arena};
resource_kind const fixed_size_kind{"fixed_size", false, make_fixed_size};
resource_kind const binning_kind{"binning", false, make_binning};

void PrintTo(resource_kind const& kind, std::ostream* os) { *os << kind.name; }

std::string kind_name(::testing::TestParamInfo<resource_kind> const& info) { return info.param.name; }

/// Blocks for the cases with a busy freeing stream: busy_blocks, plus (coalescing resources) the
/// large block and the reserve.
std::size_t busy_capacity(resource_kind const& kind)
{
  return kind.coalesces ? busy_blocks + large_blocks + reserve_blocks : busy_blocks;
}

/// What a busy stream holds: busy_blocks blocks in address order and (coalescing resources) one
/// large block after them, which no free neighbour can merge with since the last small block
/// stays allocated.
struct busy_stream {
  std::vector<void*> smalls;
  void* large{nullptr};
};

busy_stream allocate_busy(rmm::mr::any_device_resource& mr, resource_kind const& kind, rmm::cuda_stream_view stream)
{
  busy_stream busy;
  for (std::size_t i = 0; i < busy_blocks; ++i) {
    busy.smalls.push_back(mr.allocate(stream, block, rmm::CUDA_ALLOCATION_ALIGNMENT));
  }
  if (kind.coalesces) { busy.large = mr.allocate(stream, large_bytes, rmm::CUDA_ALLOCATION_ALIGNMENT); }
  return busy;
}

// ---- writing and checking ----------------------------------------------------------------------------

void fill(void* ptr, std::size_t bytes, std::uint8_t value, rmm::cuda_stream_view stream)
{
  RMM_CUDA_TRY(cudaMemsetAsync(ptr, value, bytes, stream.value()));
}

/// Once all work completed: every byte of [ptr, ptr + bytes) is `value`.
::testing::AssertionResult holds(void const* ptr, std::size_t bytes, std::uint8_t value)
{
  std::vector<std::uint8_t> host(bytes);
  RMM_CUDA_TRY(cudaMemcpy(host.data(), ptr, bytes, cudaMemcpyDeviceToHost));
  auto const wrong = std::find_if(host.begin(), host.end(), [value](std::uint8_t b) { return b != value; });
  if (wrong == host.end()) { return ::testing::AssertionSuccess(); }
  return ::testing::AssertionFailure() << "byte " << (wrong - host.begin()) << " of the block at " << ptr << " is "
                                       << static_cast<int>(*wrong) << ", not " << static_cast<int>(value)
                                       << ": the held write landed after the taker's";
}

// ---- taking memory while other streams are held ------------------------------------------------------

struct handover {
  void* block{nullptr};
  call_state allocation{call_state::pending};  ///< while the gates were closed
  std::optional<stream_state> taker_write;     ///< when the allocation returned while they were closed
  ::testing::AssertionResult intact{true};     ///< the taker's value survived the held work
};

std::ostream& operator<<(std::ostream& os, handover const& h)
{
  os << "the allocation " << to_string(h.allocation) << " while the gates were closed";
  if (h.taker_write) { os << "; then the taker's write " << to_string(*h.taker_write); }
  return os;
}

/// Starts `body` on a thread and returns its result.
using thread_launcher = std::function<std::future<void*>(std::function<void*()>)>;

std::future<void*> on_a_new_thread(std::function<void*()> body)
{
  return std::async(std::launch::async, std::move(body));
}

enum class host_wait { allowed, not_expected };

/// The core of every hand-over case. On a thread of its own (`launch`): allocates `bytes` on
/// `taker` (cudaStreamPerThread: that thread's own) and writes taker_value to the block there.
/// Here: watches the allocation. If it waits for stream work on the host, opens the gates so it
/// can finish; if it returns while the gates are closed, waits until the taker's write either
/// completed or is held up by another stream before opening them. Then checks the data. With
/// host_wait::not_expected a GPU gives the allocation 10 s instead of 200 ms to return, so that
/// only a real wait counts as one.
handover take_while_gated(rmm::mr::any_device_resource& mr,
                          rmm::cuda_stream_view taker,
                          std::size_t bytes,
                          std::vector<stream_gate*> const& gates,
                          host_wait expectation         = host_wait::allowed,
                          thread_launcher const& launch = on_a_new_thread)
{
  handover result;
  std::atomic<bool> allocated{false};
  stream_state taker_state{stream_state::pending};
  auto const open_gates = [&gates] {
    for (auto* gate : gates) { gate->open(); }
  };
  std::future<void*> taking = launch([&]() -> void* {
    RMM_CUDA_TRY(cudaSetDevice(0));
    void* ptr = mr.allocate(taker, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    allocated.store(true);
    fill(ptr, bytes, taker_value, taker);
    taker_state = settle(taker);
    return ptr;
  });
  // Declared after `taking`, so the gates open before its destructor waits for the thread.
  struct gates_opener {
    std::function<void()> open;
    ~gates_opener() { open(); }
  } const opener{open_gates};

  auto const returned = [&] { return allocated.load() || taking.wait_for(0s) == std::future_status::ready; };
  if (expectation == host_wait::not_expected) {
    result.allocation = returns_without_waiting_call(returned) ? call_state::returned : call_state::waiting;
  } else {
    result.allocation = settle_call(returned);
  }
  if (result.allocation != call_state::returned) { open_gates(); }
  result.block = taking.get();
  if (result.allocation == call_state::returned) { result.taker_write = taker_state; }
  open_gates();
  RMM_CUDA_TRY(cudaDeviceSynchronize());
  result.intact = holds(result.block, bytes, taker_value);
  return result;
}

/// Allocates on another thread. The block, when the allocation returned without the host waiting
/// for stream work (on a GPU: within 10 s); else nothing: the gates are opened so that the
/// allocation can finish, and its block goes back.
std::optional<void*> allocate_without_waiting(rmm::mr::any_device_resource& mr,
                                              rmm::cuda_stream_view stream,
                                              std::size_t bytes,
                                              std::vector<stream_gate*> const& gates = {})
{
  auto running = std::async(std::launch::async, [&] {
    RMM_CUDA_TRY(cudaSetDevice(0));
    return mr.allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  });
  if (returns_without_waiting(running)) { return running.get(); }
  for (auto* gate : gates) { gate->open(); }
  mr.deallocate(stream, running.get(), bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  return std::nullopt;
}

// ---- threads -------------------------------------------------------------------------------------------

/// Runs `setup` on a new thread, then keeps that thread (and its per-thread default stream) alive
/// until destroyed.
class parked_thread {
 public:
  explicit parked_thread(std::function<void()> setup)
  {
    auto ready = std::make_shared<std::promise<void>>();
    auto done  = ready->get_future();
    thread_    = std::thread{[this, ready, setup = std::move(setup)] {
      try {
        setup();
        ready->set_value();
      } catch (...) {
        ready->set_exception(std::current_exception());
      }
      std::unique_lock lock{mutex_};
      released_cv_.wait(lock, [this] { return released_; });
    }};
    try {
      done.get();
    } catch (...) {
      release_and_join();
      throw;
    }
  }
  ~parked_thread() { release_and_join(); }
  parked_thread(parked_thread const&)            = delete;
  parked_thread& operator=(parked_thread const&) = delete;

 private:
  void release_and_join()
  {
    {
      std::lock_guard lock{mutex_};
      released_ = true;
    }
    released_cv_.notify_all();
    if (thread_.joinable()) { thread_.join(); }
  }

  std::mutex mutex_;
  std::condition_variable released_cv_;
  bool released_{false};
  std::thread thread_;
};

/// A new thread whose std::thread::id equals `wanted`, the id of a thread that was joined last:
/// glibc gives a new thread the cached stack, and with it the id, of the thread that ended last.
/// A candidate that gets another recycled stack (say, of an emulator stream worker that ended
/// meanwhile) is kept alive, so that the next candidate gets the next cached stack.
class thread_with_id {
 public:
  explicit thread_with_id(std::thread::id wanted, int candidates = 16)
  {
    for (int i = 0; i < candidates && !found_; ++i) {
      std::unique_lock lock{mutex_};
      verdict_.reset();
      threads_.emplace_back([this, wanted] { candidate(wanted); });
      cv_.wait(lock, [this] { return verdict_.has_value(); });
      found_ = *verdict_;
    }
  }
  ~thread_with_id()
  {
    {
      std::lock_guard lock{mutex_};
      released_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) { t.join(); }
  }
  thread_with_id(thread_with_id const&)            = delete;
  thread_with_id& operator=(thread_with_id const&) = delete;

  [[nodiscard]] bool found() const { return found_; }

  /// Runs `body` on the thread with the wanted id (only when found()).
  std::future<void*> run(std::function<void*()> body)
  {
    {
      std::lock_guard lock{mutex_};
      body_ = std::move(body);
    }
    cv_.notify_all();
    return result_.get_future();
  }

 private:
  void candidate(std::thread::id wanted)
  {
    bool const mine = std::this_thread::get_id() == wanted;
    std::unique_lock lock{mutex_};
    verdict_ = mine;
    cv_.notify_all();
    cv_.wait(lock, [this, mine] { return released_ || (mine && body_); });
    if (!mine || !body_) { return; }
    auto body = std::move(body_);
    lock.unlock();
    try {
      result_.set_value(body());
    } catch (...) {
      result_.set_exception(std::current_exception());
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<bool> verdict_;  // of the candidate started last
  bool released_{false};
  bool found_{false};
  std::function<void*()> body_;
  std::promise<void*> result_;
  std::vector<std::thread> threads_;
};

// ---- the cases -------------------------------------------------------------------------------------------

class StreamSafety : public ::testing::TestWithParam<resource_kind> {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }

  // Non-blocking: the legacy default stream (synchronous copies) never waits for held work.
  rmm::cuda_stream a_{rmm::cuda_stream::flags::non_blocking};
  rmm::cuda_stream b_{rmm::cuda_stream::flags::non_blocking};
  rmm::cuda_stream c_{rmm::cuda_stream::flags::non_blocking};
};

/// R4 needs a block only a large request fits, so only the coalescing resources run those cases.
class CoalescingStreamSafety : public StreamSafety {};

// R1: the freeing stream's own later work is ordered after its earlier work by the stream itself.
TEST_P(StreamSafety, ReuseOnTheFreeingStreamDoesNotWait)
{
  auto mr   = GetParam().make(1);
  void* ptr = mr.allocate(a_, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  stream_gate gate{a_};
  fill(ptr, block, held_value, a_);
  mr.deallocate(a_, ptr, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  auto const again = allocate_without_waiting(mr, a_, block, {&gate});
  ASSERT_TRUE(again.has_value()) << "allocating on the freeing stream waited for that stream's held work";
  EXPECT_EQ(*again, ptr) << "the resource holds one block";
  fill(*again, block, taker_value, a_);
  gate.open();
  RMM_CUDA_TRY(cudaDeviceSynchronize());
  EXPECT_TRUE(holds(*again, block, taker_value));
  mr.deallocate(a_, *again, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

// R2 through an event: the freeing stream freed many blocks and then missed, so an event recorded
// after those frees exists. Another stream takes one of them without the host waiting (no device
// synchronization), but its work waits for the freeing stream's held writes.
TEST_P(StreamSafety, FreedBlocksMoveToAnotherStreamBehindAnEvent)
{
  auto const& kind = GetParam();
  auto mr          = kind.make(busy_capacity(kind));
  auto busy        = allocate_busy(mr, kind, a_);
  stream_gate gate{a_};
  std::set<void*> freed;
  for (std::size_t i = 0; i < busy_blocks; i += 2) {
    fill(busy.smalls[i], block, held_value, a_);
    mr.deallocate(a_, busy.smalls[i], block, rmm::CUDA_ALLOCATION_ALIGNMENT);
    freed.insert(busy.smalls[i]);
  }
  void* missed = nullptr;
  if (kind.coalesces) {
    missed = mr.allocate(a_, reserve_blocks * block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }  // larger than any hole: a miss

  auto const taken = take_while_gated(mr, b_, block, {&gate}, host_wait::not_expected);
  EXPECT_TRUE(taken.intact) << taken;
  EXPECT_EQ(taken.allocation, call_state::returned) << "the hand-over waited on the host, not on an event";
  EXPECT_EQ(freed.count(taken.block), 1U) << "the block did not come from the freeing stream";
  if (taken.taker_write) {
    EXPECT_NE(*taken.taker_write, stream_state::completed) << "the taker's write ran while the held write waited";
  }
  if (missed != nullptr) { mr.deallocate(a_, missed, reserve_blocks * block, rmm::CUDA_ALLOCATION_ALIGNMENT); }
  mr.deallocate(b_, taken.block, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

// Host-ordered allocation (allocate_sync; cudaMalloc under the preload shim): there is no stream
// of the caller to make wait, so a block another stream freed, even one its event covers, is
// handed over only after the host waited for that stream's held work.
TEST_P(StreamSafety, HostOrderedAllocationWaitsOnTheHostForTheFreeingStreamsWork)
{
  auto const& kind = GetParam();
  auto mr          = kind.make(busy_capacity(kind));
  auto busy        = allocate_busy(mr, kind, a_);
  stream_gate gate{a_};
  std::set<void*> freed;
  for (std::size_t i = 0; i < busy_blocks; i += 2) {
    fill(busy.smalls[i], block, held_value, a_);
    mr.deallocate(a_, busy.smalls[i], block, rmm::CUDA_ALLOCATION_ALIGNMENT);
    freed.insert(busy.smalls[i]);
  }
  void* missed = nullptr;
  if (kind.coalesces) {
    missed = mr.allocate(a_, reserve_blocks * block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }  // records the event

  auto call         = on_a_new_thread([&mr] { return mr.allocate_sync(block, rmm::CUDA_ALLOCATION_ALIGNMENT); });
  auto const before = settle(call);
  EXPECT_NE(before, call_state::returned) << "allocate_sync handed out a block while its freeing stream's writes "
                                             "were held";
  gate.open();
  void* taken = call.get();
  EXPECT_EQ(freed.count(taken), 1U) << "the block did not come from the freeing stream";
  RMM_CUDA_TRY(cudaMemset(taken, taker_value, block));
  RMM_CUDA_TRY(cudaDeviceSynchronize());
  EXPECT_TRUE(holds(taken, block, taker_value));
  mr.deallocate_sync(taken, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  if (missed != nullptr) { mr.deallocate(a_, missed, reserve_blocks * block, rmm::CUDA_ALLOCATION_ALIGNMENT); }
}

// R2 without an event: the only block was just freed and nothing ran on its stream since. Another
// stream may have it only once the freeing stream's held write is done (or ordered before it).
TEST_P(StreamSafety, JustFreedBlockMovesToAnotherStreamOnlyAfterTheFreeingStreamsWork)
{
  auto mr   = GetParam().make(1);
  void* ptr = mr.allocate(a_, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  stream_gate gate{a_};
  fill(ptr, block, held_value, a_);
  mr.deallocate(a_, ptr, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  auto const taken = take_while_gated(mr, b_, block, {&gate});
  EXPECT_TRUE(taken.intact) << taken;
  mr.deallocate(b_, taken.block, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

// R3: every block sits free in the arena of one of two held streams (the coalescing resources get
// a request only all of them merged can meet). Reclaiming them all for a third stream must wait
// for both streams' held writes.
TEST_P(StreamSafety, MemoryReclaimedFromEveryStreamWaitsForAllTheirWork)
{
  auto const& kind          = GetParam();
  std::size_t const blocks  = kind.coalesces ? 8 : 4;
  std::size_t const request = kind.coalesces ? blocks * block : block;
  auto mr                   = kind.make(blocks);
  std::vector<void*> all;
  for (std::size_t i = 0; i < blocks; ++i) { all.push_back(mr.allocate(c_, block, rmm::CUDA_ALLOCATION_ALIGNMENT)); }
  stream_gate gate_a{a_};
  stream_gate gate_b{b_};
  for (std::size_t i = 0; i < blocks; ++i) {
    auto const stream = i % 2 == 0 ? a_.view() : b_.view();
    fill(all[i], block, held_value, stream);
    mr.deallocate(stream, all[i], block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  auto const taken = take_while_gated(mr, c_, request, {&gate_a, &gate_b});
  EXPECT_TRUE(taken.intact) << taken;
  mr.deallocate(c_, taken.block, request, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

// cudaStreamPerThread is a different stream in every thread: a block one thread freed on it is
// ordered for another thread's per-thread stream like for any other stream.
TEST_P(StreamSafety, PerThreadDefaultStreamsOfTwoThreadsAreDifferentStreams)
{
  auto mr = GetParam().make(1);
  std::unique_ptr<stream_gate> gate;
  parked_thread const first{[&] {
    RMM_CUDA_TRY(cudaSetDevice(0));
    void* ptr = mr.allocate(rmm::cuda_stream_per_thread, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
    gate      = std::make_unique<stream_gate>(rmm::cuda_stream_per_thread);
    fill(ptr, block, held_value, rmm::cuda_stream_per_thread);
    mr.deallocate(rmm::cuda_stream_per_thread, ptr, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }};
  auto const taken = take_while_gated(mr, rmm::cuda_stream_per_thread, block, {gate.get()});
  EXPECT_TRUE(taken.intact) << taken;
  mr.deallocate(c_, taken.block, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

// A thread that ended leaves its per-thread stream's work behind (the stream goes with the thread,
// its queued work still runs). A new thread may get the same std::thread::id, but its per-thread
// stream is another stream: the dead thread's blocks must not reach it unordered.
TEST_P(StreamSafety, NewThreadWithAnExitedThreadsIdHasItsOwnPerThreadStream)
{
  auto mr = GetParam().make(1);
  std::unique_ptr<stream_gate> gate;
  std::thread::id exited;
  std::thread{[&] {
    RMM_CUDA_TRY(cudaSetDevice(0));
    void* ptr = mr.allocate(rmm::cuda_stream_per_thread, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
    gate      = std::make_unique<stream_gate>(rmm::cuda_stream_per_thread);
    fill(ptr, block, held_value, rmm::cuda_stream_per_thread);
    mr.deallocate(rmm::cuda_stream_per_thread, ptr, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
    exited = std::this_thread::get_id();
  }}.join();
  thread_with_id successor{exited};
  if (!successor.found()) {
    GTEST_SKIP() << "not exercised: no new thread got the exited thread's id (the C library does not recycle it)";
  }
  auto const on_successor = [&successor](std::function<void*()> body) { return successor.run(std::move(body)); };
  auto const taken =
    take_while_gated(mr, rmm::cuda_stream_per_thread, block, {gate.get()}, host_wait::allowed, on_successor);
  EXPECT_TRUE(taken.intact) << taken;
  mr.deallocate(c_, taken.block, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

// A driver may hand the handle of a destroyed stream to the next stream created, while the old
// stream's work is still queued. The new stream is another stream: blocks freed on the old one
// must reach it ordered. The emulator recycles handles on request; on a GPU the case runs when the
// driver reuses the handle within 64 creations. The old stream is the program's (asked for its
// identity at every call) or the library's (rmm::cuda_stream, whose identity is remembered until
// it is destroyed).
template <class Stream>
void check_stream_created_with_a_destroyed_streams_handle(resource_kind const& kind, Stream first)
{
  std::optional<scoped_emulator_knob> recycle_handles;
  if (can_observe_streams()) { recycle_handles.emplace("RMM_EMU_REUSE_STREAM_HANDLES", "1"); }
  auto mr           = kind.make(1);
  auto const handle = first.create();
  void* ptr         = mr.allocate(handle, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  stream_gate gate{handle};
  fill(ptr, block, held_value, handle);
  mr.deallocate(handle, ptr, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  first.destroy();  // its write stays queued behind the gate

  program_streams next;
  auto const reused = next.create_until(handle);
  if (can_observe_streams()) { ASSERT_EQ(reused, handle) << "the emulator did not recycle the handle"; }
  if (reused != handle) {
    GTEST_SKIP() << "not exercised: the driver did not hand out the destroyed stream's handle again";
  }
  auto const taken = take_while_gated(mr, reused, block, {&gate});
  EXPECT_TRUE(taken.intact) << taken;
  mr.deallocate(reused, taken.block, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

struct program_stream {
  cudaStream_t stream{};
  cudaStream_t create()
  {
    RMM_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return stream;
  }
  void destroy() { RMM_CUDA_TRY(cudaStreamDestroy(stream)); }
};

struct library_stream {
  std::optional<rmm::cuda_stream> stream;
  cudaStream_t create() { return stream.emplace(rmm::cuda_stream::flags::non_blocking).value(); }
  void destroy() { stream.reset(); }
};

TEST_P(StreamSafety, StreamCreatedWithADestroyedStreamsHandleIsAnotherStream)
{
  check_stream_created_with_a_destroyed_streams_handle(GetParam(), program_stream{});
}

TEST_P(StreamSafety, StreamCreatedWithADestroyedLibraryStreamsHandleIsAnotherStream)
{
  check_stream_created_with_a_destroyed_streams_handle(GetParam(), library_stream{});
}

// R4, in sequence: the freeing stream frees many blocks and misses, so an event covering those
// frees exists (another stream takes one of them without the host waiting). Only then, behind a
// gate, it writes and frees the large block. A request only the large block fits must not get it
// on the older event.
TEST_P(CoalescingStreamSafety, FreeAfterTheLastRecordIsNotHandedOverOnThatEvent)
{
  auto const& kind = GetParam();
  auto mr          = kind.make(busy_capacity(kind));
  auto busy        = allocate_busy(mr, kind, a_);
  for (std::size_t i = 0; i < busy_blocks; i += 2) {
    mr.deallocate(a_, busy.smalls[i], block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  void* missed =
    mr.allocate(a_, reserve_blocks * block, rmm::CUDA_ALLOCATION_ALIGNMENT);  // larger than any hole: a miss
  auto const probe = allocate_without_waiting(mr, b_, block);
  ASSERT_TRUE(probe.has_value()) << "the frees were not handed over on an event: the case needs one";

  stream_gate gate{a_};
  fill(busy.large, large_bytes, held_value, a_);
  mr.deallocate(a_, busy.large, large_bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  auto const taken = take_while_gated(mr, b_, large_bytes, {&gate});
  EXPECT_TRUE(taken.intact) << taken;
  mr.deallocate(b_, taken.block, large_bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  mr.deallocate(b_, *probe, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  mr.deallocate(a_, missed, reserve_blocks * block, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

// R4, racing: a free lands on the stream after the resource enqueued an event record but before
// the call that records returns (the emulator holds that thread inside cudaEventRecord). The event
// does not cover that free; a request only the freed block fits must not get it on that event.
TEST_P(CoalescingStreamSafety, FreeRacingWithAnEventRecordIsNotCoveredByIt)
{
  if (!can_observe_streams()) {
    GTEST_SKIP() << "needs the emulator to hold a thread inside cudaEventRecord; the sequential case is "
                    "FreeAfterTheLastRecordIsNotHandedOverOnThatEvent";
  }
  auto const& kind = GetParam();
  auto mr          = kind.make(busy_capacity(kind));
  auto busy        = allocate_busy(mr, kind, a_);
  std::future<void> recording;  // destroyed after `pause` resumes the thread it waits for
  std::future<void> late_free;
  event_record_pause pause{a_};
  auto const settle_recording = [&] {
    auto const deadline = std::chrono::steady_clock::now() + 10s;
    while (recording.wait_for(100us) != std::future_status::ready && !pause.holding()) {
      if (std::chrono::steady_clock::now() > deadline) { break; }
    }
  };
  // Free on A one call at a time until a call records A's event; a miss on A last.
  for (std::size_t i = 0; i < busy_blocks && !pause.holding(); i += 2) {
    recording = std::async(std::launch::async, [&, ptr = busy.smalls[i]] {
      RMM_CUDA_TRY(cudaSetDevice(0));
      mr.deallocate(a_, ptr, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
    });
    settle_recording();
  }
  void* missed = nullptr;
  if (!pause.holding()) {
    recording = std::async(std::launch::async, [&] {
      RMM_CUDA_TRY(cudaSetDevice(0));
      missed = mr.allocate(a_, reserve_blocks * block, rmm::CUDA_ALLOCATION_ALIGNMENT);
    });
    settle_recording();
  }
  ASSERT_TRUE(pause.holding()) << "no free or miss on the stream recorded an event on it: the case needs one";

  stream_gate gate{a_};  // after the record: the event completes, the large block's write is held
  fill(busy.large, large_bytes, held_value, a_);
  late_free = std::async(std::launch::async, [&] {
    RMM_CUDA_TRY(cudaSetDevice(0));
    mr.deallocate(a_, busy.large, large_bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  });
  // A resource may make the free wait for the recording call; then it is no race, and still a
  // free after the record.
  bool const raced = late_free.wait_for(2s) == std::future_status::ready;
  pause.resume();
  recording.get();
  late_free.get();
  RecordProperty("free_raced_the_record", raced ? "yes" : "no: the free waited for the recording call");

  auto const taken = take_while_gated(mr, b_, large_bytes, {&gate});
  EXPECT_TRUE(taken.intact) << taken;
  mr.deallocate(b_, taken.block, large_bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  if (missed != nullptr) { mr.deallocate(a_, missed, reserve_blocks * block, rmm::CUDA_ALLOCATION_ALIGNMENT); }
}

INSTANTIATE_TEST_SUITE_P(Resources,
                         StreamSafety,
                         ::testing::Values(pool_kind, arena_kind, fixed_size_kind, binning_kind),
                         kind_name);
INSTANTIATE_TEST_SUITE_P(Resources, CoalescingStreamSafety, ::testing::Values(pool_kind, arena_kind), kind_name);

// R3 through release(): it reclaims all free memory at once. Memory it keeps (here: a chunk still
// partly in use cannot go back upstream) must be reused only after the freeing stream's held work.
TEST(PoolStreamSafety, ReleaseReusesMemoryOnlyAfterEveryStreamsWork)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  rmm::cuda_stream a{rmm::cuda_stream::flags::non_blocking};
  rmm::cuda_stream c{rmm::cuda_stream::flags::non_blocking};
  rmm::mr::any_device_resource mr{make_pool(2)};
  auto* pool = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(mr);
  ASSERT_NE(pool, nullptr);
  void* freed = mr.allocate(c, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  void* kept  = mr.allocate(c, block, rmm::CUDA_ALLOCATION_ALIGNMENT);  // in use: release() cannot give the chunk back
  std::future<std::size_t> releasing;
  stream_gate gate{a};
  fill(freed, block, held_value, a);
  mr.deallocate(a, freed, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  releasing               = std::async(std::launch::async, [pool] {
    RMM_CUDA_TRY(cudaSetDevice(0));
    return pool->release();
  });
  auto const release_call = settle(releasing);
  if (release_call != call_state::returned) { gate.open(); }
  EXPECT_EQ(releasing.get(), 0U) << "nothing could go back upstream";
  auto const taken = take_while_gated(mr, c, block, {&gate});
  EXPECT_TRUE(taken.intact) << "release() " << to_string(release_call) << "; " << taken;
  mr.deallocate(c, taken.block, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
  mr.deallocate(c, kept, block, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

}  // namespace
}  // namespace rmm::test
