#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/mr/suballocator_statistics.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>

namespace rmm::mr {

namespace detail {
template <class FreeStore>
class stream_ordered_suballocator;
class fixed_block_store;
}  // namespace detail

/**
 * Allocates blocks of one fixed size in O(1): each allocation of at most block_size bytes takes a
 * whole block. Requests larger than a block throw rmm::bad_alloc.
 *
 * Blocks come from upstream `blocks_to_preallocate` at a time (the first batch at construction).
 * Freed blocks are reused on their stream at once and by other streams after an event, as in
 * pool_memory_resource. Copies share the blocks.
 */
class fixed_size_memory_resource final : public device_memory_resource {
 public:
  static constexpr std::size_t default_block_size            = std::size_t{1} << 20;
  static constexpr std::size_t default_blocks_to_preallocate = 128;

  explicit fixed_size_memory_resource(any_device_resource upstream,
                                      std::size_t block_size            = default_block_size,
                                      std::size_t blocks_to_preallocate = default_blocks_to_preallocate);

  /// The block size (the requested one rounded up to a multiple of 256).
  [[nodiscard]] std::size_t get_block_size() const noexcept;
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept;
  [[nodiscard]] suballocator_statistics statistics() const;

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  std::shared_ptr<detail::stream_ordered_suballocator<detail::fixed_block_store>> blocks_;
};

}  // namespace rmm::mr
