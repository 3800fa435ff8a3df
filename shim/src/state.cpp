// SPDX-License-Identifier: Apache-2.0
#include "state.hpp"

#include "settings.hpp"

#include <rmm/aligned.hpp>

namespace rmm::shim {

namespace {

shim_state* create() { return new shim_state; }  // never deleted: hooks run until the last moment

}  // namespace

shim_state::shim_state()
  : deferred{[this](int device, std::uintptr_t ptr, std::size_t size, give_back_order order) {
               auto* stack = stacks.find(device);
               if (stack == nullptr) { return; }
               if (order == give_back_order::legacy_stream) {
                 stack->deallocate(cuda::stream_ref{CU_STREAM_LEGACY}, reinterpret_cast<void*>(ptr), size,
                                   rmm::CUDA_ALLOCATION_ALIGNMENT);
               } else {
                 stack->deallocate_sync(reinterpret_cast<void*>(ptr), size, rmm::CUDA_ALLOCATION_ALIGNMENT);
               }
             },
             streams}
{
  if (!settings().watch_streams) { streams.never_watch(); }
}

shim_state& detail::first_state() noexcept
{
  static std::once_flag first;
  std::call_once(first, [] {
    shim_state* expected = nullptr;
    detail::current_state.compare_exchange_strong(expected, create());
  });
  return *detail::current_state.load(std::memory_order_acquire);
}

void renew_state_after_fork() noexcept
{
  detail::current_state.store(create(), std::memory_order_release);
  forget_exit_in_child();
}

}  // namespace rmm::shim
