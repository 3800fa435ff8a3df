// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>

namespace rmm::mr::detail {

/**
 * How an allocation or a free is ordered: on a stream (allocate / deallocate), or on the host
 * (allocate_sync / deallocate_sync: memory with no work pending on any stream). Adaptors write
 * their logic once over an order and pass it on, so the host-ordered calls reach the resource that
 * can serve them without a synchronization.
 */
class allocation_order {
 public:
  [[nodiscard]] static allocation_order on(cuda_stream_view stream) noexcept { return allocation_order{stream, false}; }
  [[nodiscard]] static allocation_order host() noexcept { return allocation_order{cuda_stream_view{}, true}; }

  [[nodiscard]] bool is_host() const noexcept { return host_; }
  /// The stream; the default stream for host ordering (what logs show).
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }

  [[nodiscard]] void* allocate(any_device_resource& upstream, std::size_t bytes) const
  {
    return host_ ? upstream.allocate_sync(bytes, rmm::CUDA_ALLOCATION_ALIGNMENT)
                 : upstream.allocate(stream_, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
  void deallocate(any_device_resource& upstream, void* ptr, std::size_t bytes) const noexcept
  {
    if (host_) {
      upstream.deallocate_sync(ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    } else {
      upstream.deallocate(stream_, ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    }
  }

 private:
  allocation_order(cuda_stream_view stream, bool host) noexcept : stream_{stream}, host_{host} {}

  cuda_stream_view stream_;
  bool host_;
};

}  // namespace rmm::mr::detail
