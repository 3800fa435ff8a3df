// SPDX-License-Identifier: Apache-2.0
#include <rmm/aligned.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>

namespace rmm::mr {

struct binning_memory_resource::bins {
  struct bin {
    std::size_t size;
    any_device_resource resource;
  };

  explicit bins(any_device_resource up) : upstream{std::move(up)} {}

  /// The resource serving `bytes`: the smallest bin that holds it, else the upstream.
  any_device_resource& resource_for(std::size_t bytes) noexcept
  {
    for (auto& b : by_size) {  // a handful of bins: a linear scan beats a search
      if (bytes <= b.size) { return b.resource; }
    }
    return upstream;
  }

  /// Called by every allocation until `frozen` is seen set: from then on `by_size` never changes,
  /// so allocations read it without a lock.
  void freeze()
  {
    std::lock_guard lock{mutex};
    frozen.store(true, std::memory_order_release);
  }

  any_device_resource upstream;
  std::vector<bin> by_size;  // ascending; written only under `mutex` and before `frozen` is set
  // add_bin and the first allocation take `mutex`, so a bin is either added before any allocation
  // reads by_size, or refused; `frozen` (released after the last write) lets later allocations
  // skip the lock.
  std::mutex mutex;
  std::atomic<bool> frozen{false};
};

namespace {

/// Enough blocks per upstream request to make about 2 MiB, and never fewer than 8.
std::size_t blocks_per_chunk(std::size_t bin_size)
{
  return std::max<std::size_t>(8, (std::size_t{2} << 20) / bin_size);
}

}  // namespace

std::size_t binning_memory_resource::default_bin_reservation(std::size_t allocation_size)
{
  RMM_EXPECTS(allocation_size > 0, "binning_memory_resource: a bin size must not be 0");
  if (allocation_size > max_allocation_size) { return std::numeric_limits<std::size_t>::max(); }
  auto const block  = align_up(allocation_size, CUDA_ALLOCATION_ALIGNMENT);
  auto const blocks = blocks_per_chunk(allocation_size);
  return block > max_allocation_size / blocks ? std::numeric_limits<std::size_t>::max() : block * blocks;
}

binning_memory_resource::binning_memory_resource(any_device_resource upstream)
  : binning_memory_resource(std::move(upstream), default_min_size_exponent, default_max_size_exponent)
{
}

binning_memory_resource::binning_memory_resource(any_device_resource upstream,
                                                 std::int8_t min_size_exponent,
                                                 std::int8_t max_size_exponent)
  : bins_{std::make_shared<bins>(std::move(upstream))}
{
  RMM_EXPECTS(min_size_exponent >= 8 && min_size_exponent <= max_size_exponent && max_size_exponent <= 40,
              fmt::format("binning_memory_resource: bin exponents must satisfy 8 <= min <= max <= 40 (bins of "
                          "256 B to 1 TiB), got min {} and max {}",
                          min_size_exponent, max_size_exponent));
  for (int e = int{min_size_exponent}; e <= int{max_size_exponent}; ++e) { add_bin(std::size_t{1} << e); }
}

binning_memory_resource::binning_memory_resource(any_device_resource upstream,
                                                 std::vector<std::size_t> const& bin_sizes)
  : bins_{std::make_shared<bins>(std::move(upstream))}
{
  for (auto const size : bin_sizes) { add_bin(size); }
}

void binning_memory_resource::add_bin(std::size_t allocation_size, std::optional<any_device_resource> bin_resource)
{
  RMM_EXPECTS(allocation_size > 0, "binning_memory_resource: a bin size must not be 0");
  if (allocation_size > max_allocation_size) {
    throw rmm::out_of_memory{fmt::format(
      "binning_memory_resource: a bin of {} can never serve an allocation: no allocation can be larger than {} "
      "bytes; use a smaller bin size",
      rmm::format_bytes_exact(allocation_size), max_allocation_size)};
  }
  if (!bin_resource && default_bin_reservation(allocation_size) > max_allocation_size) {
    throw rmm::out_of_memory{fmt::format(
      "binning_memory_resource: a bin of {} can never be created: its first {} blocks together exceed the {} bytes "
      "any allocation can have; use a smaller bin size, or pass the bin's resource",
      rmm::format_bytes_exact(allocation_size), blocks_per_chunk(allocation_size), max_allocation_size)};
  }
  std::lock_guard lock{bins_->mutex};
  RMM_EXPECTS(!bins_->frozen.load(std::memory_order_relaxed),
              "binning_memory_resource: bins can only be added before the first allocation (a new bin would send "
              "later deallocations of existing allocations to the wrong resource)");
  auto& by_size = bins_->by_size;
  auto it       = std::lower_bound(by_size.begin(), by_size.end(), allocation_size,
                                   [](bins::bin const& b, std::size_t s) { return b.size < s; });
  if (it != by_size.end() && it->size == allocation_size) { return; }  // the bin there stays
  any_device_resource resource = bin_resource ? std::move(*bin_resource)
                                              : any_device_resource{fixed_size_memory_resource{
                                                  bins_->upstream, allocation_size, blocks_per_chunk(allocation_size)}};
  by_size.insert(it, bins::bin{allocation_size, std::move(resource)});
}

device_async_resource_ref binning_memory_resource::get_upstream_resource() const noexcept { return bins_->upstream; }

std::vector<std::size_t> binning_memory_resource::bin_sizes() const
{
  std::lock_guard lock{bins_->mutex};
  std::vector<std::size_t> sizes;
  for (auto const& b : bins_->by_size) { sizes.push_back(b.size); }
  return sizes;
}

void* binning_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  if (!bins_->frozen.load(std::memory_order_acquire)) [[unlikely]] { bins_->freeze(); }
  return bins_->resource_for(bytes).allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

void binning_memory_resource::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  bins_->resource_for(bytes).deallocate(stream, ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

void* binning_memory_resource::do_allocate_sync(std::size_t bytes)
{
  if (!bins_->frozen.load(std::memory_order_acquire)) [[unlikely]] { bins_->freeze(); }
  return bins_->resource_for(bytes).allocate_sync(bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

void binning_memory_resource::do_deallocate_sync(void* ptr, std::size_t bytes) noexcept
{
  bins_->resource_for(bytes).deallocate_sync(ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

bool binning_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* binning = dynamic_cast<binning_memory_resource const*>(&other);
  return binning != nullptr && binning->bins_ == bins_;
}

}  // namespace rmm::mr
