// SPDX-License-Identifier: Apache-2.0
#include "pause_gate.hpp"

#include <chrono>
#include <thread>

namespace rmm::shim {

std::uint32_t detail::take_gate_shard() noexcept
{
  static std::atomic<std::uint32_t> next{0};
  gate_shard = next.fetch_add(1, std::memory_order_relaxed) % pause_gate::shard_count;
  return gate_shard;
}

void pause_gate::close_and_drain() noexcept
{
  closed_.store(true, std::memory_order_seq_cst);
  for (auto const& s : shards_) {
    // A call inside finishes what it does (an allocation may wait for the device a while).
    while (s.inside.load(std::memory_order_seq_cst) != 0) { std::this_thread::sleep_for(std::chrono::microseconds{50}); }
  }
}

}  // namespace rmm::shim
