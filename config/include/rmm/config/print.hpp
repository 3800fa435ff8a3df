// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/config/description.hpp>
#include <rmm/config/schema.hpp>

#include <optional>
#include <string>

namespace rmm::config {

/**
 * @brief The resolved stack for humans.
 *
 * Every layer top to bottom with every parameter's final value and where it came from (built-in
 * default, FILE:LINE:COLUMN, or the environment variable), then the [shim] settings. With a
 * device, percentages also show the bytes they resolve to.
 *
 * @param stack a validated description
 * @param device the device's memory, to resolve percentages against (default: none)
 * @return the text, one line per layer and per parameter
 */
[[nodiscard]] std::string describe(stack_description const& stack,
                                   std::optional<build_context> const& device = std::nullopt);

/**
 * @brief A parameter's value as TOML would spell it ("512MiB", "50%", true, [256, 4096]).
 *
 * @param value the value
 * @return the TOML text; "(unset)" for std::monostate, which TOML cannot spell
 */
[[nodiscard]] std::string value_to_toml(parameter_value const& value);

}  // namespace rmm::config
