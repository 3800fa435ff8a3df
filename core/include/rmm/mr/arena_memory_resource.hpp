#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/mr/suballocator_statistics.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>
#include <optional>

namespace rmm::mr {

namespace detail {
template <class FreeStore>
class stream_ordered_suballocator;
class coalescing_free_list;
}  // namespace detail

/**
 * A fixed-size global arena carved into per-thread and per-stream arenas.
 *
 * The global arena (`arena_size`, default half of the device's free memory) is reserved from
 * upstream at construction and never grows. Allocations on a non-default stream use that stream's
 * arena; allocations on a default stream (0, cudaStreamLegacy, cudaStreamPerThread) use the
 * calling thread's arena, so threads sharing the default stream do not contend. Memory moves
 * between arenas with the same rules as pool_memory_resource (events across streams, one device
 * synchronization before giving up), and any thread may free any allocation. With
 * `dump_log_on_failure`, an allocation failure also writes every arena's state to the debug log.
 */
class arena_memory_resource final : public device_memory_resource {
 public:
  explicit arena_memory_resource(any_device_resource upstream,
                                 std::optional<std::size_t> arena_size = std::nullopt,
                                 bool dump_log_on_failure             = false);

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept;
  [[nodiscard]] suballocator_statistics statistics() const;

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  std::shared_ptr<detail::stream_ordered_suballocator<detail::coalescing_free_list>> arenas_;
};

}  // namespace rmm::mr
