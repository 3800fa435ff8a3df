// SPDX-License-Identifier: Apache-2.0
#include "stream_identity.hpp"

#include "../../detail/cuda_driver.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace rmm::mr::detail {

namespace {

/// The driver's answer, on every operation on a stream the library did not create: one driver
/// call, through a pointer looked up once.
std::uint64_t ask_driver(cudaStream_t stream)
{
  static auto const get_id = rmm::detail::cuda_driver_table().cuStreamGetId;
  unsigned long long id    = 0;
  if (auto const status = get_id(stream, &id); status != CUDA_SUCCESS) [[unlikely]] {
    rmm::detail::throw_cu_error(status, "cuStreamGetId(stream, &id)", __FILE__, __LINE__);
  }
  return id;
}

/// The remembered streams. Every change moves the generation on, which makes every thread's
/// cached answers stale: a forgotten stream's before its handle can be reused.
struct remembered_streams {
  std::shared_mutex mutex;
  std::unordered_map<cudaStream_t, std::uint64_t> ids;
};

remembered_streams& remembered()
{
  // Never destroyed: streams may be destroyed by other static objects' destructors.
  static auto* const streams = new remembered_streams;
  return *streams;
}

constinit std::atomic<std::uint64_t> remembered_generation{1};
constinit std::atomic<std::uint64_t> default_stream_generation{0};  // moved on by forget_every_stream
constinit std::atomic<std::size_t> remembered_count{0};

/// One of a thread's latest answers: a stream's id, or that it is not remembered. Eight of them,
/// placed by a hash of the handle: a thread may alternate between a few streams.
struct cached_answer {
  cudaStream_t stream{};
  std::optional<std::uint64_t> id;
  std::uint64_t generation{0};  // 0: empty
};
constexpr unsigned cached_answer_bits = 3;

std::size_t cache_slot(cudaStream_t stream) noexcept
{
  auto const bits = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(stream));
  return static_cast<std::size_t>((bits * 0x9E3779B97F4A7C15ULL) >> (64 - cached_answer_bits));
}

}  // namespace

void remember_stream(cudaStream_t stream)
{
  auto const id = ask_driver(stream);
  auto& streams = remembered();
  std::unique_lock lock{streams.mutex};
  if (streams.ids.insert_or_assign(stream, id).second) { remembered_count.fetch_add(1, std::memory_order_relaxed); }
  remembered_generation.fetch_add(1, std::memory_order_release);
}

void forget_stream(cudaStream_t stream) noexcept
{
  // Nothing to forget (and nothing to allocate) while nothing is remembered: a stream whose
  // remembering failed is destroyed too.
  if (remembered_count.load(std::memory_order_acquire) == 0) { return; }
  auto& streams = remembered();
  std::unique_lock lock{streams.mutex};
  if (streams.ids.erase(stream) != 0) {
    remembered_count.fetch_sub(1, std::memory_order_relaxed);
    remembered_generation.fetch_add(1, std::memory_order_release);
  }
}

void forget_every_stream() noexcept
{
  default_stream_generation.fetch_add(1, std::memory_order_release);
  if (remembered_count.load(std::memory_order_acquire) == 0) { return; }
  auto& streams = remembered();
  std::unique_lock lock{streams.mutex};
  streams.ids.clear();
  remembered_count.store(0, std::memory_order_relaxed);
  remembered_generation.fetch_add(1, std::memory_order_release);
}

std::optional<std::uint64_t> remembered_id(cudaStream_t stream) noexcept
{
  // A forgotten stream was erased before its handle could be reused, so seeing no stream
  // remembered means this one is not.
  if (remembered_count.load(std::memory_order_acquire) == 0) { return std::nullopt; }
  thread_local std::array<cached_answer, std::size_t{1} << cached_answer_bits> cache{};
  auto& entry = cache[cache_slot(stream)];
  // Read before the lookup: a change after it makes the answer cached below stale at once.
  auto const generation = remembered_generation.load(std::memory_order_acquire);
  if (entry.stream == stream && entry.generation == generation) { return entry.id; }
  std::optional<std::uint64_t> id;
  {
    auto& streams = remembered();
    std::shared_lock lock{streams.mutex};
    if (auto const it = streams.ids.find(stream); it != streams.ids.end()) { id = it->second; }
  }
  entry = {stream, id, generation};
  return id;
}

std::uint64_t stream_id(cudaStream_t stream, int device)
{
  bool const legacy                    = stream == cudaStream_t{} || stream == cudaStreamLegacy;
  bool const per_thread                = stream == cudaStreamPerThread;
  constexpr std::size_t cached_devices = 64;
  if ((legacy || per_thread) && device >= 0 && static_cast<std::size_t>(device) < cached_devices) {
    // Fixed for the thread's life on that device, until a device reset gives the default streams
    // new ids: one driver call per thread, not per operation. Stored plus one, so that 0 means
    // "not asked yet".
    thread_local std::array<std::array<std::uint64_t, 2>, cached_devices> known{};
    thread_local std::uint64_t known_generation = 0;
    if (auto const now = default_stream_generation.load(std::memory_order_acquire); now != known_generation)
      [[unlikely]] {
      known            = {};
      known_generation = now;
    }
    auto& slot = known[static_cast<std::size_t>(device)][per_thread ? 1 : 0];
    if (slot == 0) {
      // A default stream is the current context's: make sure there is one (a user stream carries
      // its own).
      rmm::detail::require_context();
      slot = ask_driver(stream) + 1;
    }
    return slot - 1;
  }
  if (auto const id = remembered_id(stream)) { return *id; }
  return ask_driver(stream);
}

std::uint64_t thread_token() noexcept
{
  static std::atomic<std::uint64_t> next{1};
  thread_local std::uint64_t const token = next.fetch_add(1, std::memory_order_relaxed);
  return token;
}

}  // namespace rmm::mr::detail
