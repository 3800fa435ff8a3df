// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/config/description.hpp>

#include <rmm/environment_variables.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmm::config {

/// The variable naming the configuration file (core's table has it: rmm/environment_variables.hpp).
inline constexpr std::string_view config_file_variable = rmm::name_of(rmm::env_var::config);
/// Every override is RMM_<TYPE>_<KEY> or RMM_SHIM_<KEY>, upper case.
inline constexpr std::string_view environment_prefix = "RMM_";

/**
 * A snapshot of environment variables. The library reads the process environment only through
 * environment::from_process(), so tests and programs can pass any set of variables.
 */
class environment {
 public:
  environment() = default;
  /**
   * @brief A snapshot holding exactly `variables`.
   *
   * @param variables names and values
   */
  explicit environment(std::map<std::string, std::string, std::less<>> variables);
  /**
   * @brief The variables of this process, read now.
   *
   * @return the snapshot
   */
  [[nodiscard]] static environment from_process();

  /**
   * @brief The value of the variable `name`.
   *
   * @param name the variable's name
   * @return its value (possibly empty); nullopt when it is not set
   */
  [[nodiscard]] std::optional<std::string> get(std::string_view name) const;
  /**
   * @brief Sets the variable `name` in the snapshot (not in the process).
   *
   * @param name the variable's name
   * @param value its new value
   */
  void set(std::string name, std::string value);
  /**
   * @brief Every variable of the snapshot.
   *
   * @return the names and values, by name
   */
  [[nodiscard]] std::map<std::string, std::string, std::less<>> const& variables() const noexcept { return variables_; }

 private:
  std::map<std::string, std::string, std::less<>> variables_;
};

/**
 * @brief The environment variable that overrides `key` of layer type `type`.
 *
 * @param type the layer type, or "shim" for [shim] keys
 * @param key the key
 * @return the variable's name: RMM_POOL_INITIAL_SIZE for ("pool", "initial_size")
 */
[[nodiscard]] std::string override_variable(std::string_view type, std::string_view key);

/// One environment variable rmm reads.
struct environment_variable {
  std::string name;     ///< "RMM_POOL_INITIAL_SIZE"
  std::string toml;     ///< its twin in a configuration file ("initial_size of [[resource]] pool"), or empty
  std::string meaning;  ///< one sentence
  bool is_override{};   ///< an RMM_<TYPE>_<KEY> / RMM_SHIM_<KEY> override of a configuration value
};

/**
 * @brief Every environment variable rmm reads, in one table.
 *
 * The variables of core's table (rmm::env_vars: RMM_CONFIG, the variables of the logging adaptor
 * and the debug log, RMM_LOGGING_LEVEL, a build option listed so that it is never taken for an
 * override, and the one the shim sets for its children), then every override the schema defines:
 * the [shim] keys, then the layer types in schema order, keys in table order. RMM_SHIM_ENABLED,
 * in core's table because it is read before the configuration, is listed once, with the overrides.
 * is_reserved_variable and the table in docs/configuration.md derive from it.
 *
 * @return the table
 */
[[nodiscard]] std::vector<environment_variable> environment_variables();

/**
 * @brief The table as Markdown (name, TOML twin, meaning), as docs/configuration.md prints it.
 *
 * @return the Markdown table, header rows included
 */
[[nodiscard]] std::string environment_table_markdown();

/**
 * @brief Whether `name` is a variable of the table that is not an override: other parts of rmm
 * read it.
 *
 * @param name the variable's name
 * @return true for the variables of core's table (rmm::env_vars) but RMM_SHIM_ENABLED, an
 * override: RMM_CONFIG, RMM_LOG_FILE, RMM_DEBUG_LOG_FILE, RMM_DEBUG_LOG_LEVEL, RMM_LOGGING_LEVEL
 * and RMM_SHIM_RUN_START
 */
[[nodiscard]] bool is_reserved_variable(std::string_view name) noexcept;

/**
 * @brief Applies every RMM_<TYPE>_<KEY> / RMM_SHIM_<KEY> variable of `env` to `stack`: the value
 * replaces the key of the topmost layer of that type.
 *
 * @param stack the description to change
 * @param env the variables to apply
 * @throws config_error naming the variable when the value cannot be parsed, the key does not exist
 * (RMM_POOL_INITAL_SIZE), no layer of the type is in the stack, or the name is a likely
 * misspelling of an override (RMM_POLL_INITIAL_SIZE)
 */
void apply_environment_overrides(stack_description& stack, environment const& env);

}  // namespace rmm::config
