// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace rmm::config {

/// A size as written: a number of bytes, or a percentage of the device's free memory.
struct size_spec {
  std::uint64_t bytes{0};  ///< when !is_percent
  double percent{0};       ///< when is_percent: (0, 100]
  bool is_percent{false};  ///< whether the size is a percentage of free device memory

  /// @brief Default equality: all three members compare equal
  friend bool operator==(size_spec const&, size_spec const&) = default;
};

/// Why a size text was refused: the "expected ..." half of an error message.
struct size_problem {
  std::string expected;  ///< what a size looks like, for the error message
};

/**
 * @brief Parses "4096", "512MiB", "1.5GiB", "64 KiB", "50%", "12.5%".
 *
 * Units are binary and case-insensitive: B, KiB, MiB, GiB, TiB. Decimal units (KB, MB, GB, TB, K,
 * M, G, T) are refused because they are ambiguous. The result must be a whole number of bytes; a
 * percentage must lie in (0, 100].
 *
 * @param text what the user wrote
 * @param allow_percent whether a percentage is accepted
 * @return the size, or why `text` is not one
 */
[[nodiscard]] std::variant<size_spec, size_problem> parse_size(std::string_view text, bool allow_percent);

/**
 * @brief Bytes for `size` on a device with `free_bytes` free.
 *
 * @param size the size
 * @param free_bytes the device's free memory
 * @return the bytes; a percentage is rounded down to a multiple of 256
 */
[[nodiscard]] std::uint64_t resolve_size(size_spec const& size, std::uint64_t free_bytes) noexcept;

/**
 * @brief The size as a user would write it in TOML.
 *
 * @param size the size
 * @return `"512MiB"` or `"50%"`, quotes included (a TOML string), for a whole number of KiB, MiB,
 * GiB or TiB and for a percentage; the bare number of bytes otherwise (`4096`)
 */
[[nodiscard]] std::string to_toml_text(size_spec const& size);

}  // namespace rmm::config
