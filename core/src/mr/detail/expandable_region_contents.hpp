// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a suspended expandable region keeps of its contents in host memory (expandable_region.hpp).

#include "expandable_region.hpp"

#include <cstddef>
#include <optional>
#include <vector>

namespace rmm::mr::detail {

/// Host memory for device memory's contents: page-locked where the driver gives it (copies at the
/// link's full speed), else pageable. Throws rmm::out_of_memory when there is neither.
class host_copy {
 public:
  explicit host_copy(std::size_t bytes);
  ~host_copy();
  host_copy(host_copy const&)            = delete;
  host_copy& operator=(host_copy const&) = delete;

  [[nodiscard]] unsigned char* data() const noexcept { return data_; }
  [[nodiscard]] bool pinned() const noexcept { return pinned_; }

 private:
  unsigned char* data_{nullptr};
  bool pinned_{true};
};

struct expandable_region::saved_contents {
  std::vector<memory_range> ranges;  ///< in address order, each kept at the sum of the sizes before it
  std::size_t bytes{0};
  std::optional<host_copy> host;
};

}  // namespace rmm::mr::detail
