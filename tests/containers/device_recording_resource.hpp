// SPDX-License-Identifier: Apache-2.0
#pragma once

// A resource over cuda_memory_resource that records, for every allocation and deallocation, which
// device was current: the multi-device rules are about exactly that. Works on the emulator and
// on a GPU alike. Copies share the record.

#include <rmm/cuda_device.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace rmm::test {

class device_recording_resource final : public rmm::mr::device_memory_resource {
 public:
  struct event {
    bool is_allocation;
    int current_device;
    std::size_t bytes;
  };

  /// Every (de)allocation so far, in order.
  [[nodiscard]] std::vector<event> events() const
  {
    std::lock_guard const lock{record_->mutex};
    return record_->events;
  }
  /// Devices current at the allocations (is_allocation) or deallocations (!is_allocation).
  [[nodiscard]] std::vector<int> devices(bool is_allocation) const
  {
    std::vector<int> result;
    for (auto const& e : events()) {
      if (e.is_allocation == is_allocation) { result.push_back(e.current_device); }
    }
    return result;
  }
  [[nodiscard]] std::size_t allocations() const { return devices(true).size(); }
  [[nodiscard]] std::size_t deallocations() const { return devices(false).size(); }

 private:
  struct record {
    std::mutex mutex;
    std::vector<event> events;
  };

  void add(bool is_allocation, std::size_t bytes) const
  {
    std::lock_guard const lock{record_->mutex};
    record_->events.push_back({is_allocation, rmm::get_current_cuda_device().value(), bytes});
  }

  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    void* ptr = upstream_.allocate(stream, bytes);
    add(true, bytes);
    return ptr;
  }
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) noexcept override
  {
    add(false, bytes);
    upstream_.deallocate(stream, ptr, bytes);
  }
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override
  {
    auto const* o = dynamic_cast<device_recording_resource const*>(&other);
    return o != nullptr && o->record_ == record_;
  }

  rmm::mr::cuda_memory_resource upstream_;
  std::shared_ptr<record> record_ = std::make_shared<record>();
};

}  // namespace rmm::test
