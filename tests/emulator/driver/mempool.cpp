// SPDX-License-Identifier: Apache-2.0
#include "mempool.hpp"

#include "address_space.hpp"
#include "device.hpp"
#include "memory.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_set>

namespace rmm_emu {
namespace {

constexpr std::uint64_t kMinChunk         = 32 * MiB;
constexpr std::uint64_t kChunkGranularity = 2 * MiB;

// Guarded by memory_mutex().
std::unordered_set<Pool*>& live_pools()
{
  static auto* s = new std::unordered_set<Pool*>;
  return *s;
}

}  // namespace

Pool::Pool(Device& dev, CUmemPoolProps const& props, bool is_default)
  : dev_{dev}, props_{props}, is_default_{is_default}
{
  live_pools().insert(this);
}

void Pool::settle(Chunk& c)
{
  for (auto& [addr, b] : c.blocks) {
    if (b.free && b.pending.stream != nullptr && b.pending.reached()) { b.pending = {}; }
  }
  auto const plain_free = [](Block const& b) { return b.free && b.pending.stream == nullptr; };
  for (auto it = c.blocks.begin(); it != c.blocks.end();) {
    auto next = std::next(it);
    if (next != c.blocks.end() && plain_free(it->second) && plain_free(next->second)) {
      it->second.size += next->second.size;
      c.blocks.erase(next);  // stay on `it`: the block after may merge too
    } else {
      it = next;
    }
  }
}

bool Pool::idle(Chunk& c)
{
  settle(c);
  return c.blocks.size() == 1 && c.blocks.begin()->second.free && c.blocks.begin()->second.pending.stream == nullptr;
}

Pool::Chunk* Pool::chunk_of(std::uint64_t addr)
{
  for (auto& c : chunks_) {
    if (addr >= c->base && addr < c->base + c->size) { return c.get(); }
  }
  return nullptr;
}

CUresult Pool::grow(std::uint64_t bytes)
{
  std::uint64_t size = std::max(kMinChunk, round_up(bytes, kChunkGranularity));
  if (props_.maxSize != 0 && reserved_ + size > props_.maxSize) {
    size = round_up(bytes, kChunkGranularity);  // a smaller chunk may still fit under the cap
    if (reserved_ + size > props_.maxSize) { return CUDA_ERROR_OUT_OF_MEMORY; }
  }
  std::uint64_t addr = 0;
  if (auto r = take_device_memory(dev_, size, addr); r != CUDA_SUCCESS) { return r; }
  auto c  = std::make_unique<Chunk>();
  c->base = addr;
  c->size = size;
  c->blocks.emplace(addr, Block{size, true, {}});
  chunks_.push_back(std::move(c));
  reserved_ += size;
  reserved_high_ = std::max(reserved_high_, reserved_);
  return CUDA_SUCCESS;
}

CUresult Pool::allocate(std::uint64_t bytes, Stream const& stream, std::uint64_t& addr)
{
  std::uint64_t const need = round_up(bytes, AddressSpace::kGranularity);
  Block* best              = nullptr;
  std::uint64_t best_addr  = 0;
  auto const find_best     = [&] {
    best = nullptr;
    for (auto& c : chunks_) {
      settle(*c);
      for (auto& [a, b] : c->blocks) {
        if (!b.free || b.size < need) { continue; }
        // Pending frees are reusable by the freeing stream only: its order already protects them.
        if (b.pending.stream != nullptr && b.pending.stream.get() != &stream) { continue; }
        if (best == nullptr || b.size < best->size) {
          best      = &b;
          best_addr = a;
        }
      }
    }
  };
  find_best();
  if (best == nullptr) {
    if (auto r = grow(need); r != CUDA_SUCCESS) { return r; }
    find_best();
  }
  Chunk* c    = chunk_of(best_addr);
  Block taken = *best;
  c->blocks.erase(best_addr);
  if (taken.size > need) { c->blocks.emplace(best_addr + need, Block{taken.size - need, true, taken.pending}); }
  c->blocks.emplace(best_addr, Block{need, false, {}});
  // A block reused before its stream-ordered free ran must not be written from this thread: earlier
  // work on the stream may still use it, and the free itself will poison it in stream order.
  if (taken.pending.stream == nullptr) { poison_fresh(best_addr, bytes); }
  used_ += bytes;
  used_high_ = std::max(used_high_, used_);
  insert_allocation({best_addr, bytes, need, MemKind::pool, dev_.ordinal(), this, 0, false, next_buffer_id()});
  addr = best_addr;
  return CUDA_SUCCESS;
}

void Pool::free_deferred(std::uint64_t addr, std::uint64_t bytes, StreamPos at)
{
  Block& b = chunk_of(addr)->blocks.at(addr);
  used_ -= bytes;
  b.free    = true;
  b.pending = std::move(at);
}

void Pool::free_now(std::uint64_t addr, std::uint64_t bytes)
{
  Chunk* c = chunk_of(addr);
  Block& b = c->blocks.at(addr);
  used_ -= bytes;
  poison_freed(addr, b.size);
  b.free    = true;
  b.pending = {};
  settle(*c);
}

std::uint64_t Pool::release(std::uint64_t keep)
{
  std::uint64_t released = 0;
  for (auto it = chunks_.begin(); it != chunks_.end() && reserved_ > keep;) {
    Chunk& c = **it;
    if (!idle(c)) {
      ++it;
      continue;
    }
    AddressSpace::discard(c.base, c.size);
    return_device_memory(dev_, c.base, c.size);
    reserved_ -= c.size;
    released += c.size;
    it = chunks_.erase(it);
  }
  return released;
}

void Pool::drop_all()
{
  for (auto const& c : chunks_) {
    AddressSpace::discard(c->base, c->size);
    return_device_memory(dev_, c->base, c->size);
  }
  chunks_.clear();
  used_ = used_high_ = reserved_ = reserved_high_ = 0;
  release_threshold                               = 0;
  reuse_follow_event_dependencies_ = reuse_allow_opportunistic_ = reuse_allow_internal_dependencies_ = 1;
  access.clear();
}

CUresult Pool::get_attribute(CUmemPool_attribute attr, void* value) const
{
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      *static_cast<int*>(value) = reuse_follow_event_dependencies_;
      break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: *static_cast<int*>(value) = reuse_allow_opportunistic_; break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      *static_cast<int*>(value) = reuse_allow_internal_dependencies_;
      break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *static_cast<cuuint64_t*>(value) = release_threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *static_cast<cuuint64_t*>(value) = reserved_; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *static_cast<cuuint64_t*>(value) = reserved_high_; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *static_cast<cuuint64_t*>(value) = used_; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *static_cast<cuuint64_t*>(value) = used_high_; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult Pool::set_attribute(CUmemPool_attribute attr, void const* value)
{
  auto const as_int = [&] { return *static_cast<int const*>(value); };
  auto const as_u64 = [&] { return *static_cast<cuuint64_t const*>(value); };
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: reuse_follow_event_dependencies_ = as_int() != 0; break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: reuse_allow_opportunistic_ = as_int() != 0; break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: reuse_allow_internal_dependencies_ = as_int() != 0; break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: release_threshold = as_u64(); break;
    // The high-water marks may only be reset, to zero (they then restart from the current value).
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      if (as_u64() != 0) { return CUDA_ERROR_INVALID_VALUE; }
      reserved_high_ = reserved_;
      break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      if (as_u64() != 0) { return CUDA_ERROR_INVALID_VALUE; }
      used_high_ = used_;
      break;
    default: return CUDA_ERROR_INVALID_VALUE;  // read-only or unknown
  }
  return CUDA_SUCCESS;
}

Pool* lookup_pool(CUmemoryPool handle)
{
  auto* p = reinterpret_cast<Pool*>(handle);
  return live_pools().contains(p) ? p : nullptr;
}

void release_idle_pool_memory(Device& dev)
{
  for (Pool* p : dev.pools) { p->release(0); }
}

namespace {

void reap_destroyed_pools(Device& dev)
{
  std::erase_if(dev.pools, [](Pool* p) {
    if (!p->destroyed) { return false; }
    p->release(0);
    if (p->holds_memory()) { return false; }
    delete p;
    return true;
  });
}

}  // namespace

void drop_device_pools(Device& dev)
{
  std::erase_if(dev.pools, [&](Pool* p) {
    p->drop_all();
    if (p == dev.default_pool || p == dev.default_managed_pool) { return false; }
    live_pools().erase(p);
    delete p;
    return true;
  });
  dev.current_pool = dev.default_pool;
}

void retire_pool(Pool* p)
{
  Device& dev = p->device();
  live_pools().erase(p);
  p->destroyed = true;
  if (dev.current_pool == p) { dev.current_pool = dev.default_pool; }
  reap_destroyed_pools(dev);
}

void trim_pools_at_sync(Device& dev)
{
  std::lock_guard lock(memory_mutex());
  for (Pool* p : dev.pools) {
    if (!p->destroyed) { p->release(p->release_threshold); }
  }
  reap_destroyed_pools(dev);
}

}  // namespace rmm_emu
