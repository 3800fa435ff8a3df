// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a suspended expandable region keeps of its contents in host memory (expandable_region.hpp).

#include "expandable_region.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace rmm::mr::detail {

/// Pageable host memory for device memory's contents, in transparent huge pages where the kernel
/// gives them (fewer page faults as the copy first touches it). Throws rmm::out_of_memory when the
/// host has less available (MemAvailable): memory committed only as the copy touches it would
/// otherwise bring the kernel's out-of-memory killer rather than an error.
class host_copy {
 public:
  explicit host_copy(std::size_t bytes);
  ~host_copy();
  host_copy(host_copy const&)            = delete;
  host_copy& operator=(host_copy const&) = delete;

  [[nodiscard]] unsigned char* data() const noexcept { return data_; }
  /// The bytes it can hold (what it was made for).
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Tells the kernel it may take the pages back whenever it runs short (MADV_FREE); until it does,
  /// they stay, and writing into them again costs no page fault. The contents may be lost: write
  /// before reading. False when the kernel does not offer it (then nothing changed).
  bool give_back_lazily() noexcept;

 private:
  unsigned char* data_{nullptr};
  std::size_t size_{0};
};

struct expandable_region::saved_contents {
  std::vector<memory_range> ranges;  ///< in address order, each kept at the sum of the sizes before it
  std::size_t bytes{0};
  std::unique_ptr<host_copy> host;
  bool host_was_kept{false};  ///< `host` is the memory an earlier pause kept (it goes back there on failure)
};

}  // namespace rmm::mr::detail
