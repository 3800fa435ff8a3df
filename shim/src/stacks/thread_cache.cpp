// SPDX-License-Identifier: Apache-2.0
#include "stacks/thread_cache.hpp"

#include "stacks/thread_records.hpp"

#include <atomic>
#include <mutex>

namespace rmm::shim {

namespace {

void thread_ended(void* value) noexcept;

/// Where an ending thread's kept blocks go (set at load by prepare()).
std::atomic<void (*)(kept_block const&) noexcept> give_back_at_thread_end{nullptr};

/// The records of the threads that keep blocks, for the sweeps (thread_records.hpp).
thread_records<detail::kept_blocks>& the_registry()
{
  static auto* r =
    new thread_records<detail::kept_blocks>{thread_ended};  // never destroyed: threads end during exit too
  return *r;
}

void thread_ended(void* value) noexcept
{
  auto* blocks         = static_cast<detail::kept_blocks*>(value);
  detail::kept_ended   = true;  // a free made after this (another key's destructor) goes to the stack
  detail::kept         = nullptr;
  auto const give_back = give_back_at_thread_end.load(std::memory_order_acquire);
  for (int device = 0; device < max_devices; ++device) {
    auto const word = blocks->words[static_cast<std::size_t>(device)].exchange(0, std::memory_order_acquire);
    if (word != 0 && give_back != nullptr) { give_back(detail::decode(word, device)); }
  }
  the_registry().remove(blocks, [](detail::kept_blocks&) {});
}

}  // namespace

detail::kept_blocks* detail::register_thread() noexcept
{
  kept = the_registry().add();
  return kept;
}

std::size_t thread_cache::sweep(int device, void (*give_back)(kept_block const& block) noexcept) noexcept
{
  constexpr std::size_t batch = 64;  // given back with no lock held, a batch at a time
  std::size_t bytes           = 0;
  auto& r                     = the_registry();
  for (std::size_t next = 0;;) {
    std::array<kept_block, batch> taken{};
    std::size_t count = 0;
    bool more         = false;
    {
      std::lock_guard lock{r.mutex()};
      for (; next < r.records().size() && count < batch; ++next) {
        for (int d = 0; d < max_devices && count < batch; ++d) {
          if (device >= 0 && d != device) { continue; }
          auto& word = r.records()[next]->words[static_cast<std::size_t>(d)];
          if (word.load(std::memory_order_relaxed) == 0) { continue; }
          if (auto const found = word.exchange(0, std::memory_order_acquire); found != 0) {
            taken[count++] = detail::decode(found, d);
          }
        }
      }
      more = next < r.records().size();
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
  if (!has_device_slot(device)) { return 0; }
  auto& r = the_registry();
  std::lock_guard lock{r.mutex()};
  std::size_t bytes = 0;
  for (auto const* blocks : r.records()) {
    auto const word = blocks->words[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
    if (word != 0) { bytes += detail::decode(word, device).size; }
  }
  return bytes;
}

void thread_cache::prepare(void (*give_back)(kept_block const& block) noexcept) noexcept
{
  give_back_at_thread_end.store(give_back, std::memory_order_release);
  (void)the_registry();
}

void thread_cache::before_fork() noexcept { the_registry().mutex().lock(); }

void thread_cache::after_fork_in_parent() noexcept { the_registry().mutex().unlock(); }

void thread_cache::after_fork_in_child() noexcept
{
  auto& r = the_registry();
  r.records().clear();  // the other threads do not exist here (their records stay unreached)
  if (auto* mine = detail::kept; mine != nullptr) {
    for (auto& word : mine->words) { word.store(0, std::memory_order_relaxed); }
    r.records().push_back(mine);  // cannot allocate: it was in the list, whose capacity clear() kept
  }
  r.mutex().unlock();
}

}  // namespace rmm::shim
