// SPDX-License-Identifier: Apache-2.0
#include "simulated_device_resource.hpp"

#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

namespace rmm::replay {

namespace {
// Synthetic addresses start far above any real mapping, so a replayed pointer can never be
// mistaken for memory; they are never reused, so the 2^63 bytes above suffice for any replay.
constexpr std::uintptr_t first_address    = std::uintptr_t{1} << 52;
constexpr std::size_t address_granularity = 512;  // what cudaMalloc spaces small allocations by
}  // namespace

struct simulated_device_resource::state {
  explicit state(std::size_t device_capacity) : capacity{device_capacity} {}

  std::size_t const capacity;
  mutable std::mutex mutex;
  std::uintptr_t next_address{first_address};
  std::size_t used{};
  std::size_t peak{};
  std::unordered_map<std::uintptr_t, std::size_t> live;  // address -> bytes, to catch bad frees
};

simulated_device_resource::simulated_device_resource(std::size_t capacity) : state_{std::make_shared<state>(capacity)}
{
}

std::size_t simulated_device_resource::capacity() const noexcept { return state_->capacity; }

std::size_t simulated_device_resource::used_bytes() const noexcept
{
  std::scoped_lock lock{state_->mutex};
  return state_->used;
}

std::size_t simulated_device_resource::peak_used_bytes() const noexcept
{
  std::scoped_lock lock{state_->mutex};
  return state_->peak;
}

void* simulated_device_resource::do_allocate(std::size_t bytes, rmm::cuda_stream_view)
{
  if (bytes == 0) { return nullptr; }  // as cudaMalloc(0)
  std::scoped_lock lock{state_->mutex};
  auto& s = *state_;
  if (bytes > s.capacity - s.used) {
    throw rmm::out_of_memory{fmt::format("simulated device: cannot allocate {}: {} of its {} in use, {} free",
                                         rmm::format_bytes_exact(bytes), rmm::format_bytes(s.used),
                                         rmm::format_bytes(s.capacity), rmm::format_bytes(s.capacity - s.used))};
  }
  auto const address = s.next_address;
  s.next_address += (bytes + address_granularity - 1) / address_granularity * address_granularity;
  s.live.emplace(address, bytes);
  s.used += bytes;
  s.peak = std::max(s.peak, s.used);
  return reinterpret_cast<void*>(address);  // NOLINT: synthetic, never dereferenced
}

void simulated_device_resource::do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view) noexcept
{
  if (ptr == nullptr) { return; }
  std::scoped_lock lock{state_->mutex};
  auto& s       = *state_;
  auto const it = s.live.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == s.live.end() || it->second != bytes) {
    // A resource above handed back something it did not get from here: a bug worth stopping for.
    std::fprintf(stderr, "simulated device: deallocate(%p, %zu) does not match a live allocation%s\n", ptr, bytes,
                 it == s.live.end() ? "" : fmt::format(" (it has {} bytes)", it->second).c_str());
    std::abort();
  }
  s.used -= bytes;
  s.live.erase(it);
}

bool simulated_device_resource::do_is_equal(rmm::mr::device_memory_resource const& other) const noexcept
{
  auto const* simulated = dynamic_cast<simulated_device_resource const*>(&other);
  return simulated != nullptr && simulated->state_ == state_;
}

}  // namespace rmm::replay
