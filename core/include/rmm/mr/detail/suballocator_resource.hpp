// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/mr/suballocator_statistics.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>

namespace rmm::mr::detail {

template <class FreeStore>
class stream_ordered_suballocator;
class coalescing_free_list;
class fixed_block_store;

/// What pool, arena and fixed_size have in common: a shared sub-allocation engine behind the
/// device_memory_resource interface. Copies share the engine and compare equal.
template <class Derived, class FreeStore>
class suballocator_resource : public device_memory_resource {
 public:
  using engine_type = stream_ordered_suballocator<FreeStore>;

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept;
  /// Reserved, allocated and free bytes, free blocks, largest free block, upstream chunks.
  [[nodiscard]] suballocator_statistics statistics() const;
  /// After the device was reset (cudaDeviceReset), for a resource about to be dropped: gives back
  /// the device memory it mapped itself, which outlives a reset (CUDA's virtual memory management),
  /// while a reset frees everything else. Calls nothing else of CUDA: the events it kept for its
  /// streams went with the reset. The resource must not be used, copied or destroyed afterwards
  /// (destroying it would destroy those events): leave it.
  void release_mapped_memory_after_reset() noexcept;

 protected:
  explicit suballocator_resource(std::shared_ptr<engine_type> engine) noexcept : engine_{std::move(engine)} {}
  [[nodiscard]] engine_type& engine() const noexcept { return *engine_; }

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  void* do_allocate_sync(std::size_t bytes) override;
  void do_deallocate_sync(void* ptr, std::size_t bytes) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  std::shared_ptr<engine_type> engine_;
};

}  // namespace rmm::mr::detail
