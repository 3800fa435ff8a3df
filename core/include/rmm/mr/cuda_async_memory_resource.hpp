// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace rmm::mr {

/**
 * Stream-ordered device memory from a CUDA memory pool of its own (cudaMallocFromPoolAsync /
 * cudaFreeAsync). Copies share the pool; it is destroyed with the last copy.
 *
 * - initial_pool_size: bytes reserved up front (allocated and freed once at construction).
 * - release_threshold: bytes the pool keeps reserved at synchronization points instead of giving
 *   them back to the driver; default: UINT64_MAX (never gives back, as in RMM).
 * - export_handle_type: makes the pool's memory exportable to other processes (IPC); the device
 *   must support the handle type, else the constructor throws rmm::logic_error.
 */
class cuda_async_memory_resource final : public device_memory_resource {
 public:
  /// Handle types for exporting pool memory (values of cudaMemAllocationHandleType).
  enum class allocation_handle_type : std::int32_t {
    none                  = 0x0,
    posix_file_descriptor = 0x1,
    win32                 = 0x2,
    win32_kmt             = 0x4,
    fabric                = 0x8,
  };

  /**
   * @brief Creates a memory pool on the current device.
   *
   * @param initial_pool_size bytes to reserve up front (default: none)
   * @param release_threshold bytes the pool keeps at synchronization points (default: UINT64_MAX,
   * as RMM: it never gives memory back)
   * @param export_handle_type the handle type pool memory can be exported with (default: none)
   * @throws rmm::logic_error when the device does not support memory pools or the handle type
   * @throws rmm::out_of_memory when the initial size cannot be reserved or exceeds
   * max_allocation_size
   * @throws rmm::bad_alloc when reserving the initial size fails for another reason
   * @throws rmm::cuda_error when there is no usable device or a CUDA call fails
   */
  explicit cuda_async_memory_resource(std::optional<std::size_t> initial_pool_size             = {},
                                      std::optional<std::size_t> release_threshold             = {},
                                      std::optional<allocation_handle_type> export_handle_type = {});

  /**
   * @brief The underlying CUDA memory pool.
   *
   * @return the pool, valid while this resource or a copy of it lives
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept;
  /**
   * @brief The device the pool belongs to.
   *
   * @return the device that was current at construction
   */
  [[nodiscard]] cuda_device_id device() const noexcept;

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  struct pool;  // owns the cudaMemPool_t
  std::shared_ptr<pool> pool_;
};

static_assert(cuda::mr::resource_with<cuda_async_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
