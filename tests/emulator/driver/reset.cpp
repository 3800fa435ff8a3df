// SPDX-License-Identifier: Apache-2.0
#include "reset.hpp"

#include "context.hpp"
#include "device.hpp"
#include "memory.hpp"
#include "mempool.hpp"
#include "stream.hpp"

#include <mutex>

namespace rmm_emu {

void reset_device(Device& dev)
{
  Context& ctx = dev.primary();
  ctx.synchronize();
  for (auto const& s : ctx.user_streams()) {
    unregister_stream(*s);
    s->destroy();
  }
  {
    std::lock_guard lock(memory_mutex());
    drop_device_allocations(dev);
    drop_device_pools(dev);
  }
  std::lock_guard lock(ctx.state_mutex);
  ctx.retain_count = 0;
  ctx.flags        = 0;
  ctx.peers.clear();
}

}  // namespace rmm_emu
