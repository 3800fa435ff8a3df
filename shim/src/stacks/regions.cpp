// SPDX-License-Identifier: Apache-2.0
#include "stacks/regions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace rmm::shim {

namespace {

bool allowed(char c) noexcept
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == ':' || c == '/';
}

}  // namespace

std::string region_table::why_not_a_name(std::string_view name)
{
  if (name.empty()) { return "a tag needs a name"; }
  if (name.size() > max_region_name) {
    return fmt::format("the tag '{}...' is longer than {} characters", name.substr(0, 16), max_region_name);
  }
  if (!std::all_of(name.begin(), name.end(), allowed)) {
    return fmt::format("the tag '{}' has characters other than letters, digits, '_', '-', '.', ':' and '/'",
                       std::string{name.substr(0, max_region_name)});
  }
  return {};
}

std::optional<region_id> region_table::find(std::string_view name) const
{
  std::lock_guard lock{mutex_};
  for (std::size_t id = 1; id <= count_.load(std::memory_order_relaxed); ++id) {
    if (std::string_view{tags_[id].name.data()} == name) { return static_cast<region_id>(id); }
  }
  return std::nullopt;
}

std::optional<region_id> region_table::find_or_add(std::string_view name, bool discard, std::string& error)
{
  std::lock_guard lock{mutex_};
  auto const count = count_.load(std::memory_order_relaxed);
  for (std::size_t id = 1; id <= count; ++id) {
    if (std::string_view{tags_[id].name.data()} == name) {
      tags_[id].discards.store(discard, std::memory_order_relaxed);
      return static_cast<region_id>(id);
    }
  }
  if (count + 1 >= max_regions) {
    error = fmt::format("the process has {} tags already, the most it may name", max_regions - 1);
    return std::nullopt;
  }
  auto& fresh = tags_[count + 1];
  std::memcpy(fresh.name.data(), name.data(), name.size());
  fresh.name[name.size()] = '\0';
  fresh.discards.store(discard, std::memory_order_relaxed);
  count_.store(count + 1, std::memory_order_release);
  return static_cast<region_id>(count + 1);
}

std::string region_table::name(region_id id) const
{
  std::lock_guard lock{mutex_};
  return id == 0 ? std::string{} : std::string{tags_[id].name.data()};
}

bool region_table::discards(region_id id) const noexcept
{
  return id != 0 && tags_[id].discards.load(std::memory_order_relaxed);
}

void region_table::mark_paused(region_id id, std::size_t device_bytes, std::size_t saved_bytes, bool discarded) noexcept
{
  note_process_pause(id, device_bytes, saved_bytes, discarded);
  std::lock_guard lock{mutex_};
  tags_[id].held.reserve(1024);  // most frees made while paused are remembered without allocating
  tags_[id].paused.store(true, std::memory_order_release);
}

void region_table::note_process_pause(region_id id,
                                      std::size_t device_bytes,
                                      std::size_t saved_bytes,
                                      bool discarded) noexcept
{
  std::lock_guard lock{mutex_};
  auto& t = tags_[id];
  t.pauses += 1;
  t.device_bytes = device_bytes;
  t.saved_bytes  = saved_bytes;
  t.discarded    = discarded;
}

std::vector<kept_block> region_table::mark_resumed(region_id id)
{
  std::vector<kept_block> held;
  {
    std::lock_guard lock{mutex_};
    tags_[id].paused.store(false, std::memory_order_release);
    held.swap(tags_[id].held);
  }
  resumed_.notify_all();
  return held;
}

bool region_table::hold_free(kept_block const& block) noexcept
{
  std::lock_guard lock{mutex_};
  auto& t = tags_[block.region];
  if (!t.paused.load(std::memory_order_relaxed)) { return false; }
  try {
    t.held.push_back(block);
  } catch (...) {  // no memory to remember it: the block stays out of the stack, leaked, not reused
  }
  return true;
}

bool region_table::wait_for_resume(region_id id, std::chrono::steady_clock::time_point deadline) noexcept
{
  std::unique_lock lock{mutex_};
  return resumed_.wait_until(lock, deadline, [&] { return !tags_[id].paused.load(std::memory_order_relaxed); });
}

void region_table::forget_device(int device) noexcept
{
  std::lock_guard lock{mutex_};
  for (auto& t : tags_) {
    std::erase_if(t.held, [device](kept_block const& block) { return block.device == device; });
  }
}

region_table::tag_status region_table::status(region_id id) const
{
  std::lock_guard lock{mutex_};
  auto const& t = tags_[id];
  return {std::string{t.name.data()},
          t.discards.load(std::memory_order_relaxed),
          t.paused.load(std::memory_order_relaxed),
          t.pauses,
          t.device_bytes,
          t.saved_bytes,
          t.discarded,
          t.held.size()};
}

bool begin_region(region_id id, bool all_threads, std::string& error) noexcept
{
  if (all_threads) {
    region_id none = 0;
    if (detail::process_region.compare_exchange_strong(none, id, std::memory_order_acq_rel)) { return true; }
    error = "a region covering every thread is in place already: end it first";
    return false;
  }
  auto& mine = detail::this_thread_regions;
  if (mine.depth == max_region_depth) {
    error = fmt::format("this thread's regions nest {} deep already, the most there may be", max_region_depth);
    return false;
  }
  mine.ids[mine.depth++] = id;
  return true;
}

bool end_region() noexcept
{
  auto& mine = detail::this_thread_regions;
  if (mine.depth > 0) {
    --mine.depth;
    return true;
  }
  return detail::process_region.exchange(0, std::memory_order_acq_rel) != 0;
}

}  // namespace rmm::shim
