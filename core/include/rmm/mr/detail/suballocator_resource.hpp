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

  /// What pause_device_memory() gave back and kept.
  struct paused_memory {
    std::size_t device_bytes{0};  ///< device memory given back
    std::size_t saved_bytes{0};   ///< contents kept in host memory
    bool staged{true};            ///< copied through page-locked staging (else by the driver: slower)
  };
  /// Whether pause_device_memory() can give this resource's device memory back: it maps its
  /// memory into one reserved address range (a pool over `cuda` where the device supports it).
  [[nodiscard]] bool can_pause() const noexcept;
  /// For the preload shim's pause of a process: synchronizes the device, keeps the contents of every
  /// allocated byte in host memory (unless `discard`) and gives all the device memory back while
  /// every block keeps its address. Nothing may use the resource until resume_device_memory().
  /// Throws, with nothing changed, when it cannot (rmm::logic_error: not pausable or paused;
  /// rmm::out_of_memory: no host memory for the contents).
  paused_memory pause_device_memory(bool discard);
  /// Maps device memory back at the same addresses with the kept contents. All or nothing: throws
  /// rmm::out_of_memory saying how much is missing, the resource still paused, when the device
  /// cannot give it all. The host memory that held the contents stays the resource's, so that the
  /// next pause copies into pages already touched (several times faster than into new ones): with
  /// `keep_host_memory` it is held while running; without, it is given back lazily, the system
  /// taking the pages whenever it runs short (the next pause touches again what it took).
  void resume_device_memory(bool keep_host_memory = false);
  /// Host memory a resume kept for the next pause, held or given back lazily, in bytes.
  [[nodiscard]] std::size_t kept_host_bytes() const;
  /// Page-locked host memory the pauses' copies are staged through (16 MiB a buffer, two buffers
  /// a host thread), made at the first pause and held for the next ones, in bytes.
  [[nodiscard]] std::size_t staging_host_bytes() const;
  /// Gives the host memory a resume kept, and the staging, back to the system; returns their
  /// bytes. The next pause makes new staging.
  std::size_t release_kept_host_memory();
  [[nodiscard]] bool paused() const noexcept;

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
