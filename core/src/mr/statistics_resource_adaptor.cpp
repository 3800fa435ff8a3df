#include <rmm/detail/error.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
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

struct statistics_resource_adaptor::state {
  explicit state(any_device_resource upstream_resource) : upstream{std::move(upstream_resource)}
  {
    levels.push_back(std::make_unique<level>());
  }

  any_device_resource upstream;
  // Allocations update the top level's atomics under a shared lock; reading, pushing and popping
  // take it exclusively, so they see every level whole and no update lands in a level being
  // popped. (One plain mutex made 8 threads 4x slower than one.)
  mutable std::shared_mutex mutex;
  std::vector<std::unique_ptr<level>> levels;
};

statistics_resource_adaptor::statistics_resource_adaptor(any_device_resource upstream)
  : state_{std::make_shared<state>(std::move(upstream))}
{
}

device_async_resource_ref statistics_resource_adaptor::get_upstream_resource() const noexcept
{
  return state_->upstream;
}

counter statistics_resource_adaptor::get_bytes_counter() const noexcept
{
  std::lock_guard lock{state_->mutex};
  return state_->levels.back()->bytes.load();
}

counter statistics_resource_adaptor::get_allocations_counter() const noexcept
{
  std::lock_guard lock{state_->mutex};
  return state_->levels.back()->allocations.load();
}

std::pair<counter, counter> statistics_resource_adaptor::push_counters()
{
  std::lock_guard lock{state_->mutex};
  auto const& below = *state_->levels.back();
  std::pair<counter, counter> result{below.bytes.load(), below.allocations.load()};
  state_->levels.push_back(std::make_unique<level>());
  return result;
}

std::pair<counter, counter> statistics_resource_adaptor::pop_counters()
{
  std::lock_guard lock{state_->mutex};
  RMM_EXPECTS(state_->levels.size() > 1,
              "statistics_resource_adaptor::pop_counters: no level to pop (call push_counters first)");
  std::pair<counter, counter> const top{state_->levels.back()->bytes.load(), state_->levels.back()->allocations.load()};
  state_->levels.pop_back();
  auto& below = *state_->levels.back();
  auto bytes  = below.bytes.load();
  auto count  = below.allocations.load();
  bytes.add_counters_from_tracked_sub_block(top.first);
  count.add_counters_from_tracked_sub_block(top.second);
  below.bytes.store(bytes);
  below.allocations.store(count);
  return top;
}

void* statistics_resource_adaptor::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return allocate_in(bytes, detail::allocation_order::on(stream));
}

void statistics_resource_adaptor::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  deallocate_in(ptr, bytes, detail::allocation_order::on(stream));
}

void* statistics_resource_adaptor::do_allocate_sync(std::size_t bytes) { return allocate_in(bytes, detail::allocation_order::host()); }

void statistics_resource_adaptor::do_deallocate_sync(void* ptr, std::size_t bytes) noexcept
{
  deallocate_in(ptr, bytes, detail::allocation_order::host());
}

void* statistics_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  void* ptr = order.allocate(state_->upstream, bytes);
  std::shared_lock lock{state_->mutex};
  auto& top = *state_->levels.back();
  top.bytes.add(static_cast<std::int64_t>(bytes));
  top.allocations.add(1);
  return ptr;
}

void statistics_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  {
    std::shared_lock lock{state_->mutex};
    auto& top = *state_->levels.back();
    top.bytes.subtract(static_cast<std::int64_t>(bytes));
    top.allocations.subtract(1);
  }
  order.deallocate(state_->upstream, ptr, bytes);
}

bool statistics_resource_adaptor::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* statistics = dynamic_cast<statistics_resource_adaptor const*>(&other);
  return statistics != nullptr && statistics->state_ == state_;
}

}  // namespace rmm::mr
