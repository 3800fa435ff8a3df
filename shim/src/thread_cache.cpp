#include "thread_cache.hpp"

#include "dispatch.hpp"

#include <pthread.h>

#include <utility>

namespace rmm::shim {

namespace {

/// Trivially destructible, so reaching it costs no guard; the thread's end is seen through a
/// pthread key instead (registered with the thread's first park).
struct slot {
  void const* owner;  // the state the block belongs to; null when nothing is parked
  parked_block block;
  bool registered;
};

thread_local slot parked{};

void thread_ended(void* value) noexcept
{
  auto* ending = static_cast<slot*>(value);
  if (ending->owner == nullptr) { return; }
  auto const* owner = std::exchange(ending->owner, nullptr);
  give_back_at_thread_end(owner, ending->block);
}

/// Makes sure the thread's parked block goes back when the thread ends. False when the key
/// cannot be set (out of memory): then nothing may be parked.
bool registered(slot& s) noexcept
{
  if (s.registered) [[likely]] { return true; }
  struct thread_end_key {
    pthread_key_t key{};
    bool made{pthread_key_create(&key, thread_ended) == 0};
  };
  static thread_end_key const end;
  s.registered = end.made && pthread_setspecific(end.key, &s) == 0;
  return s.registered;
}

}  // namespace

std::optional<parked_block> thread_cache::take(void const* owner, int device, std::size_t size) noexcept
{
  auto& s = parked;
  if (s.owner != owner || s.block.size != size || s.block.device != device) { return std::nullopt; }
  s.owner = nullptr;
  return s.block;
}

std::optional<parked_block> thread_cache::take_any(void const* owner) noexcept
{
  auto& s = parked;
  if (s.owner == nullptr) { return std::nullopt; }
  bool const ours = s.owner == owner;
  s.owner         = nullptr;
  if (!ours) { return std::nullopt; }  // a forked child's copy of its parent's block: forgotten
  return s.block;
}

std::optional<parked_block> thread_cache::park(void const* owner, parked_block block) noexcept
{
  auto& s = parked;
  if (block.size > max_bytes || !registered(s)) { return block; }
  auto displaced = take_any(owner);
  s.owner        = owner;
  s.block        = block;
  return displaced;
}

std::size_t thread_cache::parked_bytes(void const* owner, int device) noexcept
{
  auto const& s = parked;
  return s.owner == owner && s.block.device == device ? s.block.size : 0;
}

}  // namespace rmm::shim
