#pragma once

#include <rmm/config/description.hpp>
#include <rmm/config/environment.hpp>

#include <filesystem>
#include <string_view>

namespace rmm::config {

/**
 * Loading: TOML (or the built-in stack) -> environment overrides -> defaults -> validation.
 * Each returns a complete stack_description, or throws config_error with the position of the
 * first problem. Pass environment{} to ignore the process environment.
 */

/// Reads and validates the TOML file at `path`.
[[nodiscard]] stack_description load_file(std::filesystem::path const& path, environment const& env);

/// Parses `toml`; positions in errors name `source_name`.
[[nodiscard]] stack_description load_string(std::string_view toml,
                                            std::string_view source_name,
                                            environment const& env);

/// The file named by RMM_CONFIG, or the built-in default stack when it is unset.
[[nodiscard]] stack_description load_from_environment(environment const& env);

/// The built-in default stack (a pool over cuda) with the overrides of `env` applied.
[[nodiscard]] stack_description load_default(environment const& env);

/// The built-in default stack as a TOML document (what `load_default(environment{})` describes).
[[nodiscard]] std::string_view default_stack_toml() noexcept;

}  // namespace rmm::config
