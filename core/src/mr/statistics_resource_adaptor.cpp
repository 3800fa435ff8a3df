// SPDX-License-Identifier: Apache-2.0
#include <rmm/detail/error.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <shared_mutex>
#include <vector>

namespace rmm::mr {

using counter = statistics_resource_adaptor::counter;

counter& counter::operator+=(std::int64_t amount) noexcept
{
  value += amount;
  total += amount;
  peak = std::max(peak, value);
  return *this;
}

counter& counter::operator-=(std::int64_t amount) noexcept
{
  value -= amount;
  return *this;
}

void counter::add_counters_from_tracked_sub_block(counter const& sub) noexcept
{
  peak = std::max(peak, value + sub.peak);
  value += sub.value;
  total += sub.total;
}

namespace {

/// A counter updated without a lock by concurrent allocations.
struct atomic_counter {
  std::atomic<std::int64_t> value{0};
  std::atomic<std::int64_t> peak{0};
  std::atomic<std::int64_t> total{0};

  void add(std::int64_t amount) noexcept
  {
    auto const now = value.fetch_add(amount, std::memory_order_relaxed) + amount;
    total.fetch_add(amount, std::memory_order_relaxed);
    auto seen = peak.load(std::memory_order_relaxed);
    while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {}
  }
  void subtract(std::int64_t amount) noexcept { value.fetch_sub(amount, std::memory_order_relaxed); }

  [[nodiscard]] counter load() const noexcept
  {
    return {value.load(std::memory_order_relaxed), peak.load(std::memory_order_relaxed),
            total.load(std::memory_order_relaxed)};
  }
  void store(counter const& c) noexcept
  {
    value.store(c.value, std::memory_order_relaxed);
    peak.store(c.peak, std::memory_order_relaxed);
    total.store(c.total, std::memory_order_relaxed);
  }
};

struct alignas(64) level {
  atomic_counter bytes;
  atomic_counter allocations;
};

}  // namespace

namespace detail {
struct statistics_state {
  statistics_state() { levels.push_back(std::make_unique<level>()); }

  // Allocations update the top level's atomics under a shared lock; reading, pushing and popping
  // take it exclusively, so they see every level whole and no update lands in a level being
  // popped. (One plain mutex made 8 threads 4x slower than one.)
  mutable std::shared_mutex mutex;
  std::vector<std::unique_ptr<level>> levels;
};
}  // namespace detail

statistics_resource_adaptor::statistics_resource_adaptor(any_device_resource upstream)
  : adaptor_resource{std::move(upstream), std::make_shared<detail::statistics_state>()}
{
}

counter statistics_resource_adaptor::get_bytes_counter() const noexcept
{
  std::lock_guard lock{state().mutex};
  return state().levels.back()->bytes.load();
}

counter statistics_resource_adaptor::get_allocations_counter() const noexcept
{
  std::lock_guard lock{state().mutex};
  return state().levels.back()->allocations.load();
}

std::pair<counter, counter> statistics_resource_adaptor::push_counters()
{
  std::lock_guard lock{state().mutex};
  auto const& below = *state().levels.back();
  std::pair<counter, counter> result{below.bytes.load(), below.allocations.load()};
  state().levels.push_back(std::make_unique<level>());
  return result;
}

std::pair<counter, counter> statistics_resource_adaptor::pop_counters()
{
  std::lock_guard lock{state().mutex};
  if (state().levels.size() <= 1) {
    throw std::out_of_range{
      "statistics_resource_adaptor::pop_counters: cannot pop the last counter pair (call push_counters first)"};
  }
  std::pair<counter, counter> const top{state().levels.back()->bytes.load(), state().levels.back()->allocations.load()};
  state().levels.pop_back();
  auto& below = *state().levels.back();
  auto bytes  = below.bytes.load();
  auto count  = below.allocations.load();
  bytes.add_counters_from_tracked_sub_block(top.first);
  count.add_counters_from_tracked_sub_block(top.second);
  below.bytes.store(bytes);
  below.allocations.store(count);
  return top;
}

void* statistics_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  void* ptr = order.allocate(upstream(), bytes);
  std::shared_lock lock{state().mutex};
  auto& top = *state().levels.back();
  top.bytes.add(static_cast<std::int64_t>(bytes));
  top.allocations.add(1);
  return ptr;
}

void statistics_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  {
    std::shared_lock lock{state().mutex};
    auto& top = *state().levels.back();
    top.bytes.subtract(static_cast<std::int64_t>(bytes));
    top.allocations.subtract(1);
  }
  order.deallocate(upstream(), ptr, bytes);
}

}  // namespace rmm::mr
