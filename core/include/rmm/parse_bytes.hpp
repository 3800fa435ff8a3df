// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one way sizes are read from people: the configuration, its environment overrides,
// rmm-replay's options and rmm-run all read sizes through this parser. format_bytes.hpp prints
// them.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace rmm {

/// Why a text is not a byte size: the "expected ..." half of an error message.
struct bytes_problem {
  std::string expected;  ///< what a byte size looks like, for the error message
};

/**
 * @brief Reads a byte size: "4096", "512MiB", "1.5GiB", "64 KiB".
 *
 * Units are binary and case-insensitive: B, KiB, MiB, GiB, TiB. Decimal units (K, KB, M, MB, G,
 * GB, T, TB) are refused, with the binary unit of the same letter suggested: whether they mean
 * powers of 1000 or 1024 is unclear. Surrounding spaces are ignored.
 *
 * @param text what the user wrote
 * @return the bytes, or why `text` names none: not a number, a negative one, an unknown or
 * ambiguous unit, more than 6 decimals, not a whole number of bytes, 2^64 bytes or more
 */
[[nodiscard]] std::variant<std::uint64_t, bytes_problem> parse_bytes(std::string_view text);

/**
 * @brief What parse_bytes accepts, as the "expected ..." of a message about text it could not read.
 *
 * @return the description
 */
[[nodiscard]] std::string byte_size_expectation();

}  // namespace rmm
