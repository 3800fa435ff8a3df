// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/config/error.hpp>
#include <rmm/config/size.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rmm::config {

struct layer_schema;

/// Which of the three sources set a value. Later ones win: built-in default < file < environment.
enum class value_origin { built_in, file, environment };

/**
 * @brief The origin's name, as describe() prints it.
 *
 * @param origin the origin
 * @return "default", "file" or "environment"
 */
[[nodiscard]] char const* to_string(value_origin origin) noexcept;

/// A parameter's value. std::monostate: not set, and the key has no default (for example a pool
/// without maximum_size); the schema says what that means.
using parameter_value =
  std::variant<std::monostate, bool, std::int64_t, std::string, size_spec, std::vector<std::uint64_t>>;

/// One key of a layer or of [shim], with its final value and where that value came from.
struct parameter {
  std::string key{};                            ///< the key, as the configuration file spells it
  parameter_value value{};                      ///< the final value
  value_origin origin{value_origin::built_in};  ///< where the final value came from
  source_location location{};                   ///< file position or environment variable; empty for built-in

  /**
   * @brief Whether the parameter has a value.
   *
   * @return false when `value` is std::monostate
   */
  [[nodiscard]] bool is_set() const noexcept { return !std::holds_alternative<std::monostate>(value); }
};

/// One layer of the stack: a resource or adaptor type and every one of its parameters (all keys
/// of the type's schema, in schema order, including defaulted and unset ones).
struct layer_description {
  layer_schema const* schema{nullptr};          ///< the layer's type
  value_origin origin{value_origin::built_in};  ///< file, or built_in for the default stack
  source_location location{};                   ///< the layer's `type` value in the file
  std::vector<parameter> parameters{};          ///< every key of the type's schema, in schema order

  /**
   * @brief The layer's type, as the configuration file names it ("pool", "cuda", ...).
   *
   * @return the schema's type; "?" when there is no schema
   */
  [[nodiscard]] std::string_view type() const noexcept;
  /**
   * @brief The parameter named `key`.
   *
   * @param key the key, as the configuration file spells it
   * @return the parameter
   * @throws std::out_of_range for a key the schema does not have
   */
  [[nodiscard]] parameter const& at(std::string_view key) const;
  /**
   * @brief The parameter named `key`.
   *
   * @param key the key, as the configuration file spells it
   * @return the parameter
   * @throws std::out_of_range for a key the schema does not have
   */
  [[nodiscard]] parameter& at(std::string_view key);
};

/// The most layers a stack may have. Every allocation passes through each layer, one function call
/// deeper on the allocating thread's stack per layer; far deeper stacks would overflow it, and no
/// useful stack comes anywhere near.
inline constexpr std::size_t max_stack_depth = 64;

/// The validated, resolved description of a configuration: the stack from top to bottom (each
/// layer's upstream is the next one) and the shim's settings.
struct stack_description {
  std::vector<layer_description> layers{};            ///< top first; the last one allocates from CUDA itself
  std::vector<parameter> shim{};                      ///< every [shim] key
  std::string source{};                               ///< the file or string name; empty for the built-in stack
  value_origin stack_origin{value_origin::built_in};  ///< file when the file listed the layers

  /**
   * @brief The [shim] parameter named `key`.
   *
   * @param key the key, as the configuration file spells it
   * @return the parameter
   * @throws std::out_of_range for an unknown key
   */
  [[nodiscard]] parameter const& shim_setting(std::string_view key) const;
};

}  // namespace rmm::config
