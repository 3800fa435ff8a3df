#include <rmm/detail/error.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <algorithm>
#include <mutex>
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

struct statistics_resource_adaptor::state {
  explicit state(any_device_resource upstream_resource) : upstream{std::move(upstream_resource)} {}

  any_device_resource upstream;
  // One mutex rather than atomics: push/pop must see the (bytes, allocations) pair of every
  // level consistently, and an uncontended lock costs about as much as two atomic adds.
  mutable std::mutex mutex;
  std::vector<std::pair<counter, counter>> levels{1};
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
  return state_->levels.back().first;
}

counter statistics_resource_adaptor::get_allocations_counter() const noexcept
{
  std::lock_guard lock{state_->mutex};
  return state_->levels.back().second;
}

std::pair<counter, counter> statistics_resource_adaptor::push_counters()
{
  std::lock_guard lock{state_->mutex};
  auto below = state_->levels.back();
  state_->levels.emplace_back();
  return below;
}

std::pair<counter, counter> statistics_resource_adaptor::pop_counters()
{
  std::lock_guard lock{state_->mutex};
  RMM_EXPECTS(state_->levels.size() > 1,
              "statistics_resource_adaptor::pop_counters: no level to pop (call push_counters first)");
  auto const top = state_->levels.back();
  state_->levels.pop_back();
  state_->levels.back().first.add_counters_from_tracked_sub_block(top.first);
  state_->levels.back().second.add_counters_from_tracked_sub_block(top.second);
  return top;
}

void* statistics_resource_adaptor::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  void* ptr = state_->upstream.allocate(stream, bytes);
  std::lock_guard lock{state_->mutex};
  auto& [byte_counter, allocation_counter] = state_->levels.back();
  byte_counter += static_cast<std::int64_t>(bytes);
  allocation_counter += 1;
  return ptr;
}

void statistics_resource_adaptor::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  {
    std::lock_guard lock{state_->mutex};
    auto& [byte_counter, allocation_counter] = state_->levels.back();
    byte_counter -= static_cast<std::int64_t>(bytes);
    allocation_counter -= 1;
  }
  state_->upstream.deallocate(stream, ptr, bytes);
}

bool statistics_resource_adaptor::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* statistics = dynamic_cast<statistics_resource_adaptor const*>(&other);
  return statistics != nullptr && statistics->state_ == state_;
}

}  // namespace rmm::mr
