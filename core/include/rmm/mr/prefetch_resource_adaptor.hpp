// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>

namespace rmm::mr {

/**
 * Prefetches every new allocation to the current device on the allocating stream, so managed
 * memory does not fault its pages in on first touch by a kernel. Meant over managed memory (a
 * managed_memory_resource, or a pool over one) with rmm::prefetch (<rmm/prefetch.hpp>): memory that
 * is not managed, or a device without concurrent managed access, has nothing to migrate.
 *
 * Copies share the adaptor and compare equal; adaptors constructed separately do not.
 */
class prefetch_resource_adaptor final : public device_memory_resource {
 public:
  /**
   * @brief Prefetches every allocation from `upstream` to the current device.
   *
   * @param upstream the resource memory comes from, preferably managed memory
   */
  explicit prefetch_resource_adaptor(any_device_resource upstream);

  /**
   * @brief The resource memory comes from.
   *
   * @return a reference valid while this adaptor or a copy of it lives
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept;

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  std::shared_ptr<any_device_resource> upstream_;  // shared by copies: the adaptor's identity
};

static_assert(cuda::mr::resource_with<prefetch_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
