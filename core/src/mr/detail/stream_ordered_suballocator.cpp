// SPDX-License-Identifier: Apache-2.0
// Instantiates the engine once per free store, from the three headers that define its members.

#include "stream_ordered_suballocator_arenas.hpp"
#include "stream_ordered_suballocator_growth.hpp"
#include "stream_ordered_suballocator_impl.hpp"

namespace rmm::mr::detail {

std::uint64_t next_suballocator_id() noexcept
{
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

arena_cache& thread_arena_cache() noexcept
{
  thread_local arena_cache cache;
  return cache;
}

template class stream_ordered_suballocator<coalescing_free_list>;
template class stream_ordered_suballocator<fixed_block_store>;

}  // namespace rmm::mr::detail
