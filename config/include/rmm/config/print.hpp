#pragma once

#include <rmm/config/description.hpp>
#include <rmm/config/schema.hpp>

#include <optional>
#include <string>

namespace rmm::config {

/**
 * The resolved stack for humans: every layer top to bottom with every parameter's final value and
 * where it came from (built-in default, FILE:LINE:COLUMN, or the environment variable), then the
 * [shim] settings. With a device, percentages also show the bytes they resolve to.
 */
[[nodiscard]] std::string describe(stack_description const& stack,
                                   std::optional<build_context> const& device = std::nullopt);

/// A parameter's value as TOML would spell it ("512MiB", "50%", true, [256, 4096]).
[[nodiscard]] std::string value_to_toml(parameter_value const& value);

}  // namespace rmm::config
