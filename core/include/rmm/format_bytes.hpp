// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one way sizes are printed for people: error messages, the configuration's output, the
// shim's report, rmm-replay and rmm-run all use these.

#include <cstddef>
#include <string>

namespace rmm {

/**
 * @brief A size in the largest binary unit it reaches, with two decimals: "512 B", "1.50 KiB",
 * "8.00 GiB". For tables and reports, where sizes line up.
 *
 * @param bytes the size
 * @return the text
 */
[[nodiscard]] std::string format_bytes(std::size_t bytes);

/**
 * @brief A size that is readable and exact, for messages someone may act on or search for:
 * "1.50 GiB (1610612737 bytes)", "8.00 GiB (8589934592 bytes)"; below 1 KiB, "100 B".
 *
 * @param bytes the size
 * @return the text
 */
[[nodiscard]] std::string format_bytes_exact(std::size_t bytes);

/**
 * @brief The shortest exact form, as a user writes sizes: "512 MiB" when the unit divides the
 * size, else as format_bytes_exact. For the configuration's output, next to what was written.
 *
 * @param bytes the size
 * @return the text
 */
[[nodiscard]] std::string format_bytes_short(std::size_t bytes);

}  // namespace rmm
