// SPDX-License-Identifier: Apache-2.0
#pragma once

// A device_memory_resource handing out plain host memory, for tests of sub-allocator bookkeeping
// that need no device: fast, and its allocations can be counted.

#include <rmm/aligned.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <new>

namespace rmm::test {

class host_upstream final : public rmm::mr::device_memory_resource {
 public:
  struct counters {
    std::atomic<std::size_t> allocations{0};
    std::atomic<std::size_t> deallocations{0};
    std::atomic<std::size_t> live_bytes{0};
  };

  [[nodiscard]] counters const& stats() const noexcept { return *counters_; }

 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view) override
  {
    void* ptr = ::operator new (bytes, std::align_val_t{rmm::CUDA_ALLOCATION_ALIGNMENT});
    ++counters_->allocations;
    counters_->live_bytes += bytes;
    return ptr;
  }
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view) noexcept override
  {
    ::operator delete (ptr, std::align_val_t{rmm::CUDA_ALLOCATION_ALIGNMENT});
    ++counters_->deallocations;
    counters_->live_bytes -= bytes;
  }
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override
  {
    auto const* h = dynamic_cast<host_upstream const*>(&other);
    return h != nullptr && h->counters_ == counters_;
  }

  std::shared_ptr<counters> counters_ = std::make_shared<counters>();
};

}  // namespace rmm::test
