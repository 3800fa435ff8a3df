// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/config/description.hpp>
#include <rmm/config/environment.hpp>

#include <filesystem>
#include <string_view>

namespace rmm::config {

// Loading: TOML (or the built-in stack) -> environment overrides -> defaults -> validation.
// Each returns a complete stack_description, or throws config_error with the position of the
// first problem. Pass environment{} to ignore the process environment.

/**
 * @brief Reads and validates the TOML file at `path`.
 *
 * A file that lists no layers, only [shim] keys, gets the built-in stack.
 *
 * @param path the file
 * @param env the environment whose overrides apply; environment{} applies none
 * @return the complete, validated description
 * @throws config_error when the file cannot be read, is not valid TOML or not a valid
 * configuration, or an override of `env` is wrong
 */
[[nodiscard]] stack_description load_file(std::filesystem::path const& path, environment const& env);

/**
 * @brief Parses and validates `toml`.
 *
 * Text that lists no layers, only [shim] keys, gets the built-in stack.
 *
 * @param toml the configuration's text
 * @param source_name the name positions in errors give the text
 * @param env the environment whose overrides apply; environment{} applies none
 * @return the complete, validated description
 * @throws config_error when the text is not valid TOML or not a valid configuration, or an
 * override of `env` is wrong
 */
[[nodiscard]] stack_description load_string(std::string_view toml,
                                            std::string_view source_name,
                                            environment const& env);

/**
 * @brief The file named by RMM_CONFIG, or the built-in default stack when it is unset.
 *
 * @param env the environment to read RMM_CONFIG and the overrides from
 * @return the complete, validated description
 * @throws config_error when RMM_CONFIG is set but empty, as load_file for its file, or when an
 * override is wrong
 */
[[nodiscard]] stack_description load_from_environment(environment const& env);

/**
 * @brief The built-in default stack (a pool over cuda) with the overrides of `env` applied.
 *
 * @param env the environment whose overrides apply; environment{} applies none
 * @return the complete, validated description
 * @throws config_error when an override of `env` is wrong
 */
[[nodiscard]] stack_description load_default(environment const& env);

/**
 * @brief The built-in default stack as a TOML document (what `load_default(environment{})`
 * describes).
 *
 * @return the document, with static storage
 */
[[nodiscard]] std::string_view default_stack_toml() noexcept;

}  // namespace rmm::config
