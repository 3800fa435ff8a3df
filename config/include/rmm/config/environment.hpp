#pragma once

#include <rmm/config/description.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmm::config {

/// The variable naming the configuration file.
inline constexpr std::string_view config_file_variable = "RMM_CONFIG";
/// Every override is RMM_<TYPE>_<KEY> or RMM_SHIM_<KEY>, upper case.
inline constexpr std::string_view environment_prefix = "RMM_";

/**
 * A snapshot of environment variables. The library reads the process environment only through
 * environment::from_process(), so tests and programs can pass any set of variables.
 */
class environment {
 public:
  environment() = default;
  explicit environment(std::map<std::string, std::string, std::less<>> variables);
  /// The variables of this process.
  [[nodiscard]] static environment from_process();

  [[nodiscard]] std::optional<std::string> get(std::string_view name) const;
  void set(std::string name, std::string value);
  [[nodiscard]] std::map<std::string, std::string, std::less<>> const& variables() const noexcept { return variables_; }

 private:
  std::map<std::string, std::string, std::less<>> variables_;
};

/// The environment variable that overrides `key` of layer type `type` ("shim" for [shim] keys):
/// RMM_POOL_INITIAL_SIZE for ("pool", "initial_size").
[[nodiscard]] std::string override_variable(std::string_view type, std::string_view key);

/// One environment variable rmm reads.
struct environment_variable {
  std::string name;     ///< "RMM_POOL_INITIAL_SIZE"
  std::string toml;     ///< its twin in a configuration file ("initial_size of [[resource]] pool"), or empty
  std::string meaning;  ///< one sentence
  bool is_override{};   ///< an RMM_<TYPE>_<KEY> / RMM_SHIM_<KEY> override of a configuration value
};

/**
 * Every environment variable rmm reads, in one table: RMM_CONFIG, the variables of the logging
 * adaptor and the debug log, and every override the schema defines (types in schema order, keys
 * in table order). is_reserved_variable and the table in docs/configuration.md derive from it.
 */
[[nodiscard]] std::vector<environment_variable> environment_variables();

/// The table as Markdown (name, TOML twin, meaning), as docs/configuration.md prints it.
[[nodiscard]] std::string environment_table_markdown();

/// Variables of the table that are not overrides: other parts of rmm read them.
[[nodiscard]] bool is_reserved_variable(std::string_view name) noexcept;

/**
 * Applies every RMM_<TYPE>_<KEY> / RMM_SHIM_<KEY> variable of `env` to `stack`: the value replaces
 * the key of the topmost layer of that type. Throws config_error naming the variable when the
 * value cannot be parsed, the key does not exist (RMM_POOL_INITAL_SIZE), no layer of the type is
 * in the stack, or the name is a likely misspelling of an override (RMM_POLL_INITIAL_SIZE).
 */
void apply_environment_overrides(stack_description& stack, environment const& env);

}  // namespace rmm::config
