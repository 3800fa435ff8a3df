#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/detail/allocation_order.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>

namespace rmm::mr {

/**
 * Caps the memory allocated through it: an allocation that would take the total (each size
 * rounded up to `alignment`) past `allocation_limit` throws rmm::out_of_memory without reaching
 * the upstream. The cap holds exactly under any number of threads.
 *
 * Copies share the count and compare equal.
 */
class limiting_resource_adaptor final : public device_memory_resource {
 public:
  /// Throws rmm::logic_error unless `alignment` is a power of two.
  limiting_resource_adaptor(any_device_resource upstream,
                            std::size_t allocation_limit,
                            std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT);

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept;
  /// Bytes allocated now (each allocation rounded up to the alignment).
  [[nodiscard]] std::size_t get_allocated_bytes() const noexcept;
  [[nodiscard]] std::size_t get_allocation_limit() const noexcept;

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
