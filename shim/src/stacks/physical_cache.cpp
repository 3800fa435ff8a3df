// SPDX-License-Identifier: Apache-2.0
#include "stacks/physical_cache.hpp"

#include <algorithm>
#include <iterator>

namespace rmm::shim {

physical_cache::key physical_cache::key_of(std::size_t bytes, CUmemAllocationProp const& prop) noexcept
{
  return {bytes,
          prop.type,
          prop.requestedHandleTypes,
          prop.location.type,
          prop.location.id,
          prop.win32HandleMetaData,
          prop.allocFlags.compressionType,
          prop.allocFlags.gpuDirectRDMACapable,
          prop.allocFlags.usage};
}

std::optional<physical_cache::handle> physical_cache::take(std::size_t bytes,
                                                           CUmemAllocationProp const& prop,
                                                           unsigned long long flags)
{
  std::lock_guard lock{mutex_};
  ++creates_;
  auto const it = flags == 0 ? cached_.find(key_of(bytes, prop)) : cached_.end();
  if (it == cached_.end()) {
    ++stats_.misses;
    return std::nullopt;
  }
  auto const h = uncache(it).owner;
  ++stats_.hits;
  records_.at(h).program_references = 1;
  peak_held_                        = std::max(peak_held_, ++held_);
  return h;
}

void physical_cache::created(handle h, std::size_t bytes, CUmemAllocationProp const& prop)
{
  std::lock_guard lock{mutex_};
  records_.insert_or_assign(h, record{key_of(bytes, prop)});
  peak_held_ = std::max(peak_held_, ++held_);
}

physical_cache::drained physical_cache::uncache(std::multimap<key, handle>::iterator it)
{
  auto const h     = it->second;
  auto const bytes = it->first.bytes;
  cached_.erase(it);
  stats_.cached_bytes -= bytes;
  records_.at(h).cached = false;
  return {h, bytes};
}

std::uint64_t physical_cache::keep_for_creates() const noexcept
{
  return std::max<std::uint64_t>(256, 2 * std::uint64_t{peak_held_});
}

std::vector<physical_cache::drained> physical_cache::expired()
{
  std::lock_guard lock{mutex_};
  std::vector<drained> handles;
  auto const keep = keep_for_creates();
  while (!cached_order_.empty() && cached_order_.front().first + keep < creates_) {
    auto const [at, h] = cached_order_.front();
    cached_order_.pop_front();
    auto const r = records_.find(h);
    if (r == records_.end() || !r->second.cached || r->second.cached_at != at) { continue; }  // taken since
    auto const [first, last] = cached_.equal_range(r->second.what);
    handles.push_back(uncache(std::find_if(first, last, [h](auto const& e) { return e.second == h; })));
    records_.erase(r);
  }
  stats_.drained += handles.size();
  return handles;
}

physical_cache::release_action physical_cache::released(handle h)
{
  std::lock_guard lock{mutex_};
  auto const it = records_.find(h);
  if (it == records_.end()) { return release_action::forward; }
  auto& r = it->second;
  if (r.program_references == 0) { return release_action::refuse; }
  // The driver holds as many references as the program: all but the last go back to it.
  if (--r.program_references > 0) { return release_action::forward; }
  if (r.escaped) {
    records_.erase(it);
    --held_;
    return release_action::forward;
  }
  (void)settle(h, r);  // not escaped: cached, or left for the last unmapping
  return release_action::keep;
}

bool physical_cache::gone(handle h) const
{
  std::lock_guard lock{mutex_};
  auto const it = records_.find(h);
  return it != records_.end() && it->second.program_references == 0 && it->second.mappings == 0;
}

void physical_cache::retained(handle h)
{
  std::lock_guard lock{mutex_};
  if (auto const it = records_.find(h); it != records_.end()) { ++it->second.program_references; }
}

void physical_cache::mapped(CUdeviceptr address, std::size_t bytes, handle h)
{
  std::lock_guard lock{mutex_};
  auto const it = records_.find(h);
  if (it == records_.end()) { return; }
  ++it->second.mappings;
  mappings_.insert_or_assign(address, std::pair{bytes, h});
}

std::vector<physical_cache::handle> physical_cache::unmapped(CUdeviceptr address, std::size_t bytes)
{
  std::lock_guard lock{mutex_};
  std::vector<handle> to_release;
  for (auto m = mappings_.lower_bound(address); m != mappings_.end() && m->first < address + bytes;) {
    auto const h = m->second.second;
    m            = mappings_.erase(m);
    auto const r = records_.find(h);
    if (r == records_.end() || r->second.mappings == 0) { continue; }
    --r->second.mappings;
    if (settle(h, r->second)) {
      records_.erase(r);
      try {
        to_release.push_back(h);
      } catch (...) {  // no memory for the list: the driver's reference stays, the memory with it
      }
    }
  }
  return to_release;
}

void physical_cache::escaped(handle h)
{
  std::lock_guard lock{mutex_};
  if (auto const it = records_.find(h); it != records_.end()) { it->second.escaped = true; }
}

std::optional<physical_cache::mapping> physical_cache::mapped_at(CUdeviceptr address) const
{
  std::lock_guard lock{mutex_};
  auto m = mappings_.upper_bound(address);
  if (m == mappings_.begin()) { return std::nullopt; }
  --m;
  auto const end = m->first + m->second.first;
  if (address >= end) { return std::nullopt; }
  return mapping{m->second.second, end};
}

bool physical_cache::settle(handle h, record& r)
{
  if (r.program_references > 0 || r.mappings > 0 || r.cached) { return false; }
  if (r.escaped) {  // released by the program, exported or bound while still mapped
    --held_;
    return true;
  }
  r.cached    = true;
  r.cached_at = creates_;
  cached_order_.emplace_back(creates_, h);
  --held_;
  cached_.emplace(r.what, h);
  stats_.cached_bytes += r.what.bytes;
  stats_.peak_cached_bytes = std::max(stats_.peak_cached_bytes, stats_.cached_bytes);
  return false;
}

std::vector<physical_cache::drained> physical_cache::drain(int device)
{
  std::lock_guard lock{mutex_};
  std::vector<drained> handles;
  for (auto it = cached_.begin(); it != cached_.end();) {
    auto const& k = it->first;
    if (k.location_type != CU_MEM_LOCATION_TYPE_DEVICE || k.location_id != device) {
      ++it;
      continue;
    }
    auto const next = std::next(it);
    handles.push_back(uncache(it));
    records_.erase(handles.back().owner);
    it = next;
  }
  stats_.drained += handles.size();
  return handles;
}

physical_cache::statistics physical_cache::stats() const
{
  std::lock_guard lock{mutex_};
  return stats_;
}

std::size_t physical_cache::cached_bytes(int device) const
{
  std::lock_guard lock{mutex_};
  std::size_t bytes = 0;
  for (auto const& [k, h] : cached_) {
    if (k.location_type == CU_MEM_LOCATION_TYPE_DEVICE && k.location_id == device) { bytes += k.bytes; }
  }
  return bytes;
}

}  // namespace rmm::shim
