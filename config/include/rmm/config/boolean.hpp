// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one reading of a yes-or-no value from text, shared by every environment variable and
// command line that takes one (RMM_SHIM_ENABLED included, which is read before anything else).

#include <optional>
#include <string_view>

namespace rmm::config {

/**
 * @brief A boolean from text: `true`, `yes`, `on`, `1` or `false`, `no`, `off`, `0`, in any case,
 * surrounding whitespace ignored.
 *
 * @param text the value as written
 * @return the value, or nullopt for anything else
 */
[[nodiscard]] std::optional<bool> parse_boolean(std::string_view text) noexcept;

/// What parse_boolean accepts, for error messages.
inline constexpr std::string_view boolean_expectation = "true or false (also 1/0, yes/no, on/off)";

}  // namespace rmm::config
