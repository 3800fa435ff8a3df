// SPDX-License-Identifier: Apache-2.0
#include <rmm/format_bytes.hpp>

#include <fmt/format.h>

#include <array>

namespace rmm {

namespace {

constexpr std::array<char const*, 7> units{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

/// The largest unit `bytes` reaches (0 for bytes below 1 KiB).
std::size_t unit_of(std::size_t bytes)
{
  std::size_t unit = 0;
  while (unit + 1 < units.size() && bytes >> (10 * (unit + 1)) != 0) { ++unit; }
  return unit;
}

}  // namespace

std::string format_bytes(std::size_t bytes)
{
  auto const unit = unit_of(bytes);
  if (unit == 0) { return fmt::format("{} B", bytes); }
  return fmt::format("{:.2f} {}", static_cast<double>(bytes) / static_cast<double>(std::size_t{1} << (10 * unit)),
                     units[unit]);
}

std::string format_bytes_exact(std::size_t bytes)
{
  if (unit_of(bytes) == 0) { return fmt::format("{} B", bytes); }
  return fmt::format("{} ({} bytes)", format_bytes(bytes), bytes);
}

std::string format_bytes_short(std::size_t bytes)
{
  auto const unit  = unit_of(bytes);
  auto const scale = std::size_t{1} << (10 * unit);
  if (bytes % scale == 0) { return fmt::format("{} {}", bytes / scale, units[unit]); }
  return format_bytes_exact(bytes);
}

}  // namespace rmm
