#pragma once

// A resource that records every call (which thread, which stream, what pointer) and hands out
// synthetic addresses, so tests can check what a replay did; it refuses requests above a limit.

#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace rmm::test {

class recording_resource final : public rmm::mr::device_memory_resource {
 public:
  struct call {
    bool allocate;
    std::thread::id thread;
    cudaStream_t stream;
    void* ptr;
    std::size_t bytes;
  };

  explicit recording_resource(std::size_t refuse_above = std::numeric_limits<std::size_t>::max())
    : refuse_above_{refuse_above}
  {
  }

  [[nodiscard]] std::vector<call> calls() const
  {
    std::scoped_lock lock{mutex_};
    return calls_;
  }
  [[nodiscard]] std::size_t live() const
  {
    std::scoped_lock lock{mutex_};
    return live_;
  }

 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    if (bytes > refuse_above_) { throw rmm::out_of_memory{"recording_resource: request above the limit"}; }
    std::scoped_lock lock{mutex_};
    next_ += 0x1000;
    auto* ptr = reinterpret_cast<void*>(next_);  // NOLINT: synthetic, never dereferenced
    calls_.push_back({true, std::this_thread::get_id(), stream.value(), ptr, bytes});
    ++live_;
    return ptr;
  }
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) noexcept override
  {
    std::scoped_lock lock{mutex_};
    calls_.push_back({false, std::this_thread::get_id(), stream.value(), ptr, bytes});
    --live_;
  }
  [[nodiscard]] bool do_is_equal(rmm::mr::device_memory_resource const& other) const noexcept override
  {
    return &other == this;
  }

  std::size_t refuse_above_;
  mutable std::mutex mutex_;
  std::vector<call> calls_;
  std::uintptr_t next_{0x10000000};
  std::size_t live_{};
};

}  // namespace rmm::test
