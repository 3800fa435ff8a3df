// SPDX-License-Identifier: Apache-2.0
#pragma once

// A resource that records every call (which thread, which stream, what pointer) and hands out
// synthetic addresses, so tests can check what a replay did; it refuses requests above a limit.
// Copies share the record, as rmm's resources share their state.

#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
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
    : state_{std::make_shared<record>()}
  {
    state_->refuse_above = refuse_above;
  }

  [[nodiscard]] std::vector<call> calls() const
  {
    std::scoped_lock lock{state_->mutex};
    return state_->calls;
  }
  [[nodiscard]] std::size_t live() const
  {
    std::scoped_lock lock{state_->mutex};
    return state_->live;
  }

 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    if (bytes > state_->refuse_above) { throw rmm::out_of_memory{"recording_resource: request above the limit"}; }
    std::scoped_lock lock{state_->mutex};
    state_->next += 0x1000;
    auto* ptr = reinterpret_cast<void*>(state_->next);  // NOLINT: synthetic, never dereferenced
    state_->calls.push_back({true, std::this_thread::get_id(), stream.value(), ptr, bytes});
    ++state_->live;
    return ptr;
  }
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) noexcept override
  {
    std::scoped_lock lock{state_->mutex};
    state_->calls.push_back({false, std::this_thread::get_id(), stream.value(), ptr, bytes});
    --state_->live;
  }
  [[nodiscard]] bool do_is_equal(rmm::mr::device_memory_resource const& other) const noexcept override
  {
    auto const* same = dynamic_cast<recording_resource const*>(&other);
    return same != nullptr && same->state_ == state_;
  }

  struct record {
    std::size_t refuse_above{};
    std::mutex mutex;
    std::vector<call> calls;
    std::uintptr_t next{0x10000000};
    std::size_t live{};
  };
  std::shared_ptr<record> state_;
};

}  // namespace rmm::test
