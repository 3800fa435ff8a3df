// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>
#include <functional>
#include <memory>

namespace rmm::mr {

/**
 * A resource whose allocate and deallocate call user functions, for instance to route device
 * allocations into another framework's allocator.
 *
 * The allocate callback returns the memory or throws; returning null for a non-zero size makes
 * allocate throw rmm::bad_alloc. The deallocate callback must not throw. Copies share the
 * callbacks and compare equal.
 */
class callback_memory_resource final : public device_memory_resource {
 public:
  /// The allocate callback: returns `bytes` usable on `stream`, or throws; `arg` is the constructor's
  /// `allocate_callback_arg`.
  using allocate_callback_t = std::function<void*(std::size_t bytes, cuda_stream_view stream, void* arg)>;
  /// The deallocate callback: frees `ptr` of `bytes` on `stream`, and must not throw; `arg` is the
  /// constructor's `deallocate_callback_arg`.
  using deallocate_callback_t = std::function<void(void* ptr, std::size_t bytes, cuda_stream_view stream, void* arg)>;

  /**
   * @brief A resource calling `allocate_callback` and `deallocate_callback`.
   *
   * @param allocate_callback called with the size, the stream and `allocate_callback_arg`
   * @param deallocate_callback called with the pointer, the size, the stream and
   * `deallocate_callback_arg`; must not throw
   * @param allocate_callback_arg passed to every call of `allocate_callback`
   * @param deallocate_callback_arg passed to every call of `deallocate_callback`
   * @throws rmm::logic_error if either callback is empty
   */
  callback_memory_resource(allocate_callback_t allocate_callback,
                           deallocate_callback_t deallocate_callback,
                           void* allocate_callback_arg   = nullptr,
                           void* deallocate_callback_arg = nullptr);

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  struct callbacks;
  std::shared_ptr<callbacks const> callbacks_;
};

static_assert(cuda::mr::resource_with<callback_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
