#include "thread_cache.hpp"

#include "dispatch.hpp"

#include <pthread.h>

#include <utility>

namespace rmm::shim {

namespace {

void thread_ended(void* value) noexcept
{
  auto* ending = static_cast<detail::parked_slot*>(value);
  if (ending->owner == nullptr) { return; }
  auto const* owner = std::exchange(ending->owner, nullptr);
  give_back_at_thread_end(owner, ending->block);
}

}  // namespace

bool detail::register_thread_end(parked_slot& slot) noexcept
{
  struct thread_end_key {
    pthread_key_t key{};
    bool made{pthread_key_create(&key, thread_ended) == 0};
  };
  static thread_end_key const end;
  slot.registered = end.made && pthread_setspecific(end.key, &slot) == 0;
  return slot.registered;
}

}  // namespace rmm::shim
