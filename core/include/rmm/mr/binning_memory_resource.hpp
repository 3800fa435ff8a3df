// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace rmm::mr {

/**
 * Routes each allocation to the smallest bin that holds it; larger requests fall through to the
 * upstream resource. A bin is any resource (by default a fixed_size_memory_resource of the bin's
 * size over the upstream).
 *
 * - binning_memory_resource(upstream): bins of 256 B, 512 B, ... 1 MiB (powers of two).
 * - binning_memory_resource(upstream, min, max): bins of 2^min ... 2^max bytes.
 * - binning_memory_resource(upstream, bin_sizes): exactly those bins (none: all to the upstream).
 * - add_bin(size[, resource]) adds a bin; only before the first allocation, since moving the
 *   boundaries afterwards would send a deallocation to a resource that did not allocate it. An
 *   add_bin racing the first allocation (on another thread, or through a copy) either completes
 *   before that allocation looks at the bins or is refused.
 *
 * Copies share the bins.
 */
class binning_memory_resource final : public device_memory_resource {
 public:
  static constexpr std::int8_t default_min_size_exponent = 8;   ///< the default smallest bin: 2^8 = 256 B
  static constexpr std::int8_t default_max_size_exponent = 20;  ///< the default largest bin: 2^20 = 1 MiB

  /**
   * @brief Bins of 256 B, 512 B, ... 1 MiB over `upstream`, each reserving its first blocks from it.
   *
   * @param upstream the resource bins and larger requests allocate from
   * @throws rmm::out_of_memory when the upstream cannot provide a bin's first blocks
   * @throws rmm::bad_alloc when the upstream fails for another reason
   * @throws rmm::cuda_error when there is no usable device or a CUDA call fails
   */
  explicit binning_memory_resource(any_device_resource upstream);
  /**
   * @brief Bins of 2^min_size_exponent ... 2^max_size_exponent bytes over `upstream`, each
   * reserving its first blocks from it.
   *
   * @param upstream the resource bins and larger requests allocate from
   * @param min_size_exponent the smallest bin's exponent, from 8 (256 B)
   * @param max_size_exponent the largest bin's exponent, up to 40 (1 TiB)
   * @throws rmm::logic_error unless 8 <= min_size_exponent <= max_size_exponent <= 40
   * @throws rmm::out_of_memory when the upstream cannot provide a bin's first blocks
   * @throws rmm::bad_alloc when the upstream fails for another reason
   * @throws rmm::cuda_error when there is no usable device or a CUDA call fails
   */
  binning_memory_resource(any_device_resource upstream, std::int8_t min_size_exponent, std::int8_t max_size_exponent);
  /**
   * @brief One bin per size in `bin_sizes` (any order), each added as add_bin(size) adds it.
   *
   * @param upstream the resource bins and larger requests allocate from
   * @param bin_sizes the bins' sizes in bytes; empty sends everything to `upstream`
   * @throws rmm::logic_error for a size of 0 (a size given twice gets one bin)
   * @throws rmm::out_of_memory for a size no allocation can have, or when the upstream cannot
   * provide a bin's first blocks
   * @throws rmm::bad_alloc when the upstream fails for another reason
   * @throws rmm::cuda_error when there is no usable device or a CUDA call fails
   */
  binning_memory_resource(any_device_resource upstream, std::vector<std::size_t> const& bin_sizes);

  /**
   * @brief Adds a bin for allocations up to `allocation_size` bytes.
   *
   * Without `bin_resource`, the bin is a new fixed_size_memory_resource over the upstream, which
   * reserves default_bin_reservation(allocation_size) from it at once. Bins can only be added
   * before the first allocation. A size that already has a bin keeps it, and the call does
   * nothing, as RMM documents.
   *
   * @param allocation_size the largest request the bin serves, in bytes
   * @param bin_resource the resource serving the bin (default: a new fixed_size_memory_resource)
   * @throws rmm::logic_error after the first allocation, or for a size of 0
   * @throws rmm::out_of_memory for a size above max_allocation_size, for a new bin whose
   * reservation would exceed it, or when the upstream cannot provide that reservation
   * @throws rmm::bad_alloc when the upstream fails for another reason
   * @throws rmm::cuda_error when a CUDA call fails while the new bin reserves its blocks
   */
  void add_bin(std::size_t allocation_size, std::optional<any_device_resource> bin_resource = std::nullopt);

  /**
   * @brief What a bin that add_bin creates for `allocation_size` takes from the upstream when it
   * is added.
   *
   * A batch of blocks of that size (rounded up to 256 bytes), about 2 MiB and never fewer than 8
   * blocks.
   *
   * @param allocation_size the bin's size in bytes
   * @return the bytes reserved; SIZE_MAX when they exceed max_allocation_size
   * @throws rmm::logic_error for a size of 0
   */
  [[nodiscard]] static std::size_t default_bin_reservation(std::size_t allocation_size);

  /**
   * @brief The resource bins and larger requests allocate from.
   *
   * @return a reference valid while this resource or a copy of it lives
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept;
  /**
   * @brief The bin sizes, ascending.
   *
   * @return the largest request each bin serves, in bytes
   */
  [[nodiscard]] std::vector<std::size_t> bin_sizes() const;

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  void* do_allocate_sync(std::size_t bytes) override;
  void do_deallocate_sync(void* ptr, std::size_t bytes) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  struct bins;
  std::shared_ptr<bins> bins_;
};

static_assert(cuda::mr::resource_with<binning_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
