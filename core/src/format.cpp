#include <rmm/detail/format.hpp>

#include <fmt/format.h>

#include <array>

namespace rmm::detail {

std::string format_bytes(std::size_t bytes)
{
  static constexpr std::array<char const*, 7> units{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) { return fmt::format("{} B", bytes); }
  auto value       = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < units.size()) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, units[unit]);
}

std::string format_bytes_exact(std::size_t bytes)
{
  if (bytes < 1024) { return format_bytes(bytes); }
  return fmt::format("{} ({} bytes)", format_bytes(bytes), bytes);
}

}  // namespace rmm::detail
