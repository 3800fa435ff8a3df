#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/detail/allocation_order.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>

namespace rmm::mr {

/**
 * Serializes every allocation and deallocation of its upstream behind one mutex, for upstreams
 * that are not thread-safe themselves (rmm's own resources all are).
 *
 * Copies share the mutex and compare equal.
 */
class thread_safe_resource_adaptor final : public device_memory_resource {
 public:
  explicit thread_safe_resource_adaptor(any_device_resource upstream);

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept;

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  void* do_allocate_sync(std::size_t bytes) override;
  void do_deallocate_sync(void* ptr, std::size_t bytes) noexcept override;
  /// The adaptor's work, once for both orders.
  void* allocate_in(std::size_t bytes, detail::allocation_order order);
  void deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  struct state;
  std::shared_ptr<state> state_;
};

}  // namespace rmm::mr
