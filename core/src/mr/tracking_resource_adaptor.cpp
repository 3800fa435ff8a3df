// SPDX-License-Identifier: Apache-2.0
#include "detail/sharded_pointer_map.hpp"

#include <rmm/format_bytes.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rmm::mr {

namespace detail {
struct tracking_state {
  using allocation_info = tracking_resource_adaptor::allocation_info;

  explicit tracking_state(bool capture) : capture_stacks{capture} {}

  void insert_zero_byte(void const* ptr, allocation_info info)
  {
    std::lock_guard lock{zero_byte_mutex};
    zero_byte[ptr].push_back(std::move(info));
  }

  /// Removes one zero-byte allocation at `ptr` into `info`; false if there is none.
  bool extract_zero_byte(void const* ptr, allocation_info& info)
  {
    std::lock_guard lock{zero_byte_mutex};
    auto found = zero_byte.find(ptr);
    if (found == zero_byte.end()) { return false; }
    info = std::move(found->second.back());
    found->second.pop_back();
    if (found->second.empty()) { zero_byte.erase(found); }
    return true;
  }

  /// Every outstanding allocation, sorted by address; zero-byte ones sharing an address each listed.
  [[nodiscard]] std::vector<std::pair<void*, allocation_info>> every_allocation() const
  {
    std::vector<std::pair<void*, allocation_info>> all;
    outstanding.for_each(
      [&](void const* ptr, allocation_info const& info) { all.emplace_back(const_cast<void*>(ptr), info); });
    {
      std::lock_guard lock{zero_byte_mutex};
      for (auto const& [ptr, infos] : zero_byte) {
        for (auto const& info : infos) { all.emplace_back(const_cast<void*>(ptr), info); }
      }
    }
    std::stable_sort(all.begin(), all.end(), [](auto const& a, auto const& b) { return a.first < b.first; });
    return all;
  }

  bool const capture_stacks;
  sharded_pointer_map<allocation_info> outstanding;  ///< allocations of at least one byte
  // Zero-byte allocations are kept apart, as a list per address: an upstream may give every one of
  // them the same address (CUDA gives null), or the address of a block it hands out next. They
  // are rare, so one lock does.
  mutable std::mutex zero_byte_mutex;
  std::unordered_map<void const*, std::vector<allocation_info>> zero_byte;
  std::atomic<std::size_t> allocated_bytes{0};
  std::atomic<std::size_t> unknown_frees{0};
  std::atomic<std::size_t> size_mismatches{0};
};
}  // namespace detail

tracking_resource_adaptor::tracking_resource_adaptor(any_device_resource upstream, bool capture_stacks)
  : adaptor_resource{std::move(upstream), std::make_shared<detail::tracking_state>(capture_stacks)}
{
}

std::map<void*, tracking_resource_adaptor::allocation_info> tracking_resource_adaptor::get_outstanding_allocations()
  const
{
  std::map<void*, allocation_info> snapshot;
  // emplace keeps the first record of an address: a real block before zero-byte allocations there.
  state().outstanding.for_each(
    [&](void const* ptr, allocation_info const& info) { snapshot.emplace(const_cast<void*>(ptr), info); });
  std::lock_guard lock{state().zero_byte_mutex};
  for (auto const& [ptr, infos] : state().zero_byte) { snapshot.emplace(const_cast<void*>(ptr), infos.front()); }
  return snapshot;
}

std::size_t tracking_resource_adaptor::get_allocated_bytes() const noexcept
{
  return state().allocated_bytes.load(std::memory_order_relaxed);
}
std::size_t tracking_resource_adaptor::get_unknown_frees() const noexcept
{
  return state().unknown_frees.load(std::memory_order_relaxed);
}
std::size_t tracking_resource_adaptor::get_size_mismatches() const noexcept
{
  return state().size_mismatches.load(std::memory_order_relaxed);
}

std::string tracking_resource_adaptor::get_outstanding_allocations_str() const
{
  auto const allocations = state().every_allocation();
  if (allocations.empty()) { return {}; }  // as RMM: nothing outstanding, nothing to say
  std::size_t bytes{0};
  for (auto const& [ptr, info] : allocations) { bytes += info.allocation_size; }
  auto report = fmt::format("Outstanding allocations: {} ({})\n", allocations.size(), rmm::format_bytes_exact(bytes));
  for (auto const& [ptr, info] : allocations) {
    report += fmt::format("  {}: {}\n", fmt::ptr(ptr), rmm::format_bytes_exact(info.allocation_size));
    if (info.strace) { report += info.strace->to_string(); }
  }
  return report;
}

void tracking_resource_adaptor::log_outstanding_allocations() const
{
  if (default_logger().should_log(level_enum::debug)) {
    default_logger().write(level_enum::debug, get_outstanding_allocations_str());
  }
}

void* tracking_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  void* ptr = order.allocate(upstream(), bytes);
  try {
    allocation_info info{bytes, state().capture_stacks ? std::make_shared<rmm::detail::stack_trace const>() : nullptr};
    if (bytes == 0) {
      state().insert_zero_byte(ptr, std::move(info));
    } else {
      state().outstanding.insert(ptr, std::move(info));
    }
  } catch (...) {
    order.deallocate(upstream(), ptr, bytes);
    throw;
  }
  state().allocated_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return ptr;
}

void tracking_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  // The record of the size being freed first, so a zero-byte allocation and a block at the same
  // address are each matched with their own free.
  allocation_info record;
  bool const known = bytes == 0 ? state().extract_zero_byte(ptr, record) || state().outstanding.extract(ptr, record)
                                : state().outstanding.extract(ptr, record) || state().extract_zero_byte(ptr, record);
  if (!known) {
    state().unknown_frees.fetch_add(1, std::memory_order_relaxed);
    RMM_LOG_ERROR(
      "tracking_resource_adaptor: free of {} ({}) which this resource did not allocate or already freed; "
      "not passed to the upstream",
      fmt::ptr(ptr), rmm::format_bytes_exact(bytes));
    return;
  }
  auto const allocated_size = record.allocation_size;
  if (allocated_size != bytes) {
    state().size_mismatches.fetch_add(1, std::memory_order_relaxed);
    RMM_LOG_ERROR("tracking_resource_adaptor: free of {} with size {} but it was allocated with {}; freeing {}",
                  fmt::ptr(ptr), rmm::format_bytes_exact(bytes), rmm::format_bytes_exact(allocated_size),
                  rmm::format_bytes_exact(allocated_size));
  }
  state().allocated_bytes.fetch_sub(allocated_size, std::memory_order_relaxed);
  order.deallocate(upstream(), ptr, allocated_size);
}

}  // namespace rmm::mr
