// SPDX-License-Identifier: Apache-2.0
#include "detail/sharded_pointer_map.hpp"

#include <rmm/detail/error.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>

#include <algorithm>
#include <cstdint>

namespace rmm::mr {

namespace detail {
struct aligned_state {
  aligned_state(std::size_t alignment_, std::size_t threshold_) : alignment{alignment_}, threshold{threshold_}
  {
    RMM_EXPECTS(is_pow2(alignment),
                "aligned_resource_adaptor: the alignment must be a power of two, not " + std::to_string(alignment));
  }

  /// Zero bytes pass through as well: they have nothing to align, and the aligned address inside
  /// a padded block of zero bytes can be its end, which is where the upstream's next block starts.
  [[nodiscard]] bool passes_through(std::size_t bytes) const noexcept
  {
    return alignment <= CUDA_ALLOCATION_ALIGNMENT || bytes < threshold || bytes == 0;
  }
  /// What is taken from the upstream for `bytes`: enough to find an aligned start inside. Cannot
  /// overflow: bytes <= max_allocation_size (2^63 - 1) and the padding is below 2^63.
  [[nodiscard]] std::size_t upstream_size(std::size_t bytes) const noexcept
  {
    return bytes + alignment - CUDA_ALLOCATION_ALIGNMENT;
  }

  std::size_t const alignment;
  std::size_t const threshold;
  sharded_pointer_map<void*> upstream_address;  ///< aligned address -> upstream's, when they differ
};
}  // namespace detail

aligned_resource_adaptor::aligned_resource_adaptor(any_device_resource upstream,
                                                   std::size_t alignment,
                                                   std::size_t alignment_threshold)
  : adaptor_resource{std::move(upstream), std::make_shared<detail::aligned_state>(alignment, alignment_threshold)}
{
}
std::size_t aligned_resource_adaptor::alignment() const noexcept
{
  return std::max(state().alignment, CUDA_ALLOCATION_ALIGNMENT);
}
std::size_t aligned_resource_adaptor::alignment_threshold() const noexcept { return state().threshold; }

namespace {

/// The upstream's failure, restated in terms of the caller's request.
std::string padded_request_context(std::size_t bytes, std::size_t alignment, std::size_t padded)
{
  return "aligned_resource_adaptor: allocating " + rmm::format_bytes_exact(bytes) + " aligned to " +
         std::to_string(alignment) + " bytes (" + rmm::format_bytes_exact(padded) + " from the upstream) failed: ";
}

}  // namespace

void* aligned_resource_adaptor::allocate_padded(std::size_t bytes, detail::allocation_order order)
{
  auto const padded = state().upstream_size(bytes);
  try {
    return order.allocate(upstream(), padded);
  } catch (rmm::out_of_memory const& error) {
    throw rmm::out_of_memory{padded_request_context(bytes, state().alignment, padded) + error.reason()};
  } catch (rmm::bad_alloc const& error) {
    throw rmm::bad_alloc{padded_request_context(bytes, state().alignment, padded) + error.reason()};
  }
}

void* aligned_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  if (state().passes_through(bytes)) { return order.allocate(upstream(), bytes); }
  void* ptr     = allocate_padded(bytes, order);
  void* aligned = reinterpret_cast<void*>(align_up(reinterpret_cast<std::uintptr_t>(ptr), state().alignment));
  if (aligned != ptr) {
    try {
      state().upstream_address.insert(aligned, ptr);
    } catch (...) {
      order.deallocate(upstream(), ptr, state().upstream_size(bytes));
      throw;
    }
  }
  return aligned;
}

void aligned_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  if (state().passes_through(bytes)) {
    order.deallocate(upstream(), ptr, bytes);
    return;
  }
  void* upstream_ptr = ptr;  // unchanged when the upstream's address was already aligned
  state().upstream_address.extract(ptr, upstream_ptr);
  order.deallocate(upstream(), upstream_ptr, state().upstream_size(bytes));
}

}  // namespace rmm::mr
