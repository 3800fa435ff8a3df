#pragma once

#include <rmm/config/description.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>

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
  [[nodiscard]] std::map<std::string, std::string, std::less<>> const& variables() const noexcept
  {
    return variables_;
  }

 private:
  std::map<std::string, std::string, std::less<>> variables_;
};

/// The environment variable that overrides `key` of layer type `type` ("shim" for [shim] keys):
/// RMM_POOL_INITIAL_SIZE for ("pool", "initial_size").
[[nodiscard]] std::string override_variable(std::string_view type, std::string_view key);

/// Variables with the RMM_ prefix that belong to other parts of rmm and are never overrides.
[[nodiscard]] bool is_reserved_variable(std::string_view name) noexcept;

/**
 * Applies every RMM_<TYPE>_<KEY> / RMM_SHIM_<KEY> variable of `env` to `stack`: the value replaces
 * the key of the topmost layer of that type. Throws config_error naming the variable when the
 * value cannot be parsed, the key does not exist (RMM_POOL_INITAL_SIZE), no layer of the type is
 * in the stack, or the name is a likely misspelling of an override (RMM_POLL_INITIAL_SIZE).
 */
void apply_environment_overrides(stack_description& stack, environment const& env);

}  // namespace rmm::config
