#include "thread_cache.hpp"

#include "dispatch.hpp"

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

namespace rmm::shim {

namespace {

/// The records of the threads that keep blocks, for the sweeps. A thread's record leaves it at the
/// thread's end, under the lock, before it is deleted.
struct registry {
  std::mutex mutex;
  std::vector<detail::kept_blocks*> threads;
};

registry& the_registry()
{
  static auto* r = new registry;  // never destroyed: threads end during exit too
  return *r;
}

void thread_ended(void* value) noexcept
{
  auto* blocks       = static_cast<detail::kept_blocks*>(value);
  detail::kept_ended = true;  // a free made after this (another key's destructor) goes to the stack
  detail::kept       = nullptr;
  for (int device = 0; device < detail::kept_devices; ++device) {
    auto const word = blocks->words[static_cast<std::size_t>(device)].exchange(0, std::memory_order_acquire);
    if (word != 0) { give_back_at_thread_end(detail::decode(word, device)); }
  }
  auto& r = the_registry();
  {
    std::lock_guard lock{r.mutex};
    std::erase(r.threads, blocks);
  }
  delete blocks;
}

struct thread_end_key {
  pthread_key_t key{};
  bool made{pthread_key_create(&key, thread_ended) == 0};
};

thread_end_key const& end_key()
{
  static thread_end_key const made;
  return made;
}

}  // namespace

detail::kept_blocks* detail::register_thread() noexcept
{
  auto const& end = end_key();
  if (!end.made) { return nullptr; }
  auto* blocks = new (std::nothrow) kept_blocks;
  if (blocks == nullptr) { return nullptr; }
  auto& r = the_registry();
  {
    std::lock_guard lock{r.mutex};
    try {
      r.threads.push_back(blocks);
    } catch (...) {
      delete blocks;
      return nullptr;
    }
  }
  if (pthread_setspecific(end.key, blocks) != 0) {
    {
      std::lock_guard lock{r.mutex};
      std::erase(r.threads, blocks);
    }
    delete blocks;
    return nullptr;
  }
  kept = blocks;
  return blocks;
}

std::size_t thread_cache::sweep(int device, void (*give_back)(parked_block const& block) noexcept) noexcept
{
  constexpr std::size_t batch = 64;  // given back with no lock held, a batch at a time
  std::size_t bytes           = 0;
  auto& r                     = the_registry();
  for (std::size_t next = 0;;) {
    std::array<parked_block, batch> taken{};
    std::size_t count = 0;
    bool more         = false;
    {
      std::lock_guard lock{r.mutex};
      for (; next < r.threads.size() && count < batch; ++next) {
        for (int d = 0; d < detail::kept_devices && count < batch; ++d) {
          if (device >= 0 && d != device) { continue; }
          auto& word = r.threads[next]->words[static_cast<std::size_t>(d)];
          if (word.load(std::memory_order_relaxed) == 0) { continue; }
          if (auto const found = word.exchange(0, std::memory_order_acquire); found != 0) {
            taken[count++] = detail::decode(found, d);
          }
        }
      }
      more = next < r.threads.size();
    }
    for (std::size_t i = 0; i < count; ++i) {
      bytes += taken[i].size;
      give_back(taken[i]);
    }
    if (!more) { return bytes; }
  }
}

std::size_t thread_cache::kept_bytes(int device) noexcept
{
  if (device < 0 || device >= detail::kept_devices) { return 0; }
  auto& r = the_registry();
  std::lock_guard lock{r.mutex};
  std::size_t bytes = 0;
  for (auto const* blocks : r.threads) {
    auto const word = blocks->words[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
    if (word != 0) { bytes += detail::decode(word, device).size; }
  }
  return bytes;
}

void thread_cache::prepare() noexcept
{
  (void)the_registry();
  (void)end_key();
}

void thread_cache::before_fork() noexcept { the_registry().mutex.lock(); }

void thread_cache::after_fork_in_parent() noexcept { the_registry().mutex.unlock(); }

void thread_cache::after_fork_in_child() noexcept
{
  auto& r = the_registry();
  r.threads.clear();  // the other threads do not exist here (their records stay unreached)
  if (auto* mine = detail::kept; mine != nullptr) {
    for (auto& word : mine->words) { word.store(0, std::memory_order_relaxed); }
    r.threads.push_back(mine);  // cannot allocate: it was in the list, whose capacity clear() kept
  }
  r.mutex.unlock();
}

}  // namespace rmm::shim
