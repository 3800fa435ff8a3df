#pragma once

// The layer under the shim's event log when the log is on: a free that keeps cudaFree's promise
// (deallocate_sync) is handed to the device's open epoch of deferred frees here, after the log
// above has recorded it. The log then shows each free when the program made it, not when its
// epoch completed. Everything else passes to the stack below.

#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

namespace rmm::shim {

class deferring_resource final : public rmm::mr::device_memory_resource {
 public:
  using defer_fn = std::function<void(int device, std::uintptr_t ptr, std::size_t size)>;

  deferring_resource(rmm::mr::any_device_resource below, int device, defer_fn defer)
    : below_{std::move(below)}, device_{device}, defer_{std::move(defer)}
  {
  }

 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    return below_.allocate(cuda::stream_ref{stream.value()}, bytes);
  }
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) noexcept override
  {
    below_.deallocate(cuda::stream_ref{stream.value()}, ptr, bytes);
  }
  void* do_allocate_sync(std::size_t bytes) override { return below_.allocate_sync(bytes); }
  void do_deallocate_sync(void* ptr, std::size_t bytes) noexcept override
  {
    try {
      defer_(device_, reinterpret_cast<std::uintptr_t>(ptr), bytes);
    } catch (...) {  // no memory for the epoch's bookkeeping: the stack's own host-ordered free
      below_.deallocate_sync(ptr, bytes);
    }
  }
  [[nodiscard]] bool do_is_equal(rmm::mr::device_memory_resource const& other) const noexcept override
  {
    return this == &other;
  }

  rmm::mr::any_device_resource below_;
  int device_;
  defer_fn defer_;
};

}  // namespace rmm::shim
