#pragma once

#include <cstddef>
#include <string>

namespace rmm::detail {

/// Human-readable size with a binary unit: "512 B", "1.50 KiB", "8.00 GiB", "1.00 PiB".
[[nodiscard]] std::string format_bytes(std::size_t bytes);

/// "1.00 PiB (1125899906842624 bytes)": readable, and exact for grepping.
[[nodiscard]] std::string format_bytes_exact(std::size_t bytes);

}  // namespace rmm::detail
