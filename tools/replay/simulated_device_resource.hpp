// SPDX-License-Identifier: Apache-2.0
#pragma once

// A device that exists only as bookkeeping: it hands out synthetic addresses and refuses, with
// rmm::out_of_memory, whatever would take it beyond its capacity. rmm-replay puts it at the bottom
// of a stack (--simulate-device-size) to study logs from devices larger than the one at hand. No
// memory is behind the addresses; nothing in a replay reads or writes them.

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>
#include <memory>

namespace rmm::replay {

class simulated_device_resource final : public rmm::mr::device_memory_resource {
 public:
  explicit simulated_device_resource(std::size_t capacity);

  [[nodiscard]] std::size_t capacity() const noexcept;
  /// Bytes allocated and not yet freed, as requested.
  [[nodiscard]] std::size_t used_bytes() const noexcept;
  /// The most bytes allocated at once since construction.
  [[nodiscard]] std::size_t peak_used_bytes() const noexcept;

 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(rmm::mr::device_memory_resource const& other) const noexcept override;

  struct state;
  std::shared_ptr<state> state_;  // copies share the device
};

}  // namespace rmm::replay
