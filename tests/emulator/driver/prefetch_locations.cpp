// SPDX-License-Identifier: Apache-2.0
#include "prefetch_locations.hpp"

#include <iterator>
#include <map>

namespace rmm_emu {
namespace {

struct span {
  std::uint64_t end;
  CUmemLocation location;
};

// Disjoint ranges by their first byte.
std::map<std::uint64_t, span>& ranges()
{
  static auto* const m = new std::map<std::uint64_t, span>;
  return *m;
}

bool same(CUmemLocation const& a, CUmemLocation const& b) { return a.type == b.type && a.id == b.id; }

// Cuts the ranges so that none crosses `at`.
void split_at(std::uint64_t at)
{
  auto& m = ranges();
  auto it = m.upper_bound(at);
  if (it == m.begin()) { return; }
  --it;
  if (it->first < at && at < it->second.end) {
    m.emplace(at, span{it->second.end, it->second.location});
    it->second.end = at;
  }
}

}  // namespace

void forget_prefetches(std::uint64_t addr, std::uint64_t bytes)
{
  auto const end = addr + bytes;
  split_at(addr);
  split_at(end);
  auto& m = ranges();
  m.erase(m.lower_bound(addr), m.lower_bound(end));
}

void note_prefetch(std::uint64_t addr, std::uint64_t bytes, CUmemLocation location)
{
  forget_prefetches(addr, bytes);
  ranges().emplace(addr, span{addr + bytes, location});
}

CUmemLocation last_prefetch_location(std::uint64_t addr, std::uint64_t bytes)
{
  CUmemLocation none{};
  none.type      = CU_MEM_LOCATION_TYPE_INVALID;
  auto const& m  = ranges();
  auto const end = addr + bytes;
  auto it        = m.upper_bound(addr);
  if (it == m.begin()) { return none; }
  --it;
  if (it->second.end <= addr) { return none; }
  auto const location = it->second.location;
  auto covered        = it->second.end;
  for (++it; covered < end; ++it) {
    if (it == m.end() || it->first != covered || !same(it->second.location, location)) { return none; }
    covered = it->second.end;
  }
  return location;
}

}  // namespace rmm_emu
