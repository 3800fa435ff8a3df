#include <rmm/mr/before_growth.hpp>

#include <atomic>
#include <new>

namespace rmm::mr {

namespace {

struct hook {
  before_growth_callback callback;
  void* context;
};

std::atomic<hook const*> current_hook{nullptr};

}  // namespace

void set_before_growth_callback(before_growth_callback callback, void* context) noexcept
{
  // Each setting is a new immutable record, never freed: a resource reading the previous one while
  // it is replaced keeps a valid record (hooks are set a handful of times per process).
  current_hook.store(callback == nullptr ? nullptr : new (std::nothrow) hook{callback, context},
                     std::memory_order_release);
}

namespace detail {

bool call_before_growth(cuda_device_id device, std::size_t bytes) noexcept
{
  auto const* h = current_hook.load(std::memory_order_acquire);
  return h != nullptr && h->callback(h->context, device, bytes);
}

}  // namespace detail

}  // namespace rmm::mr
