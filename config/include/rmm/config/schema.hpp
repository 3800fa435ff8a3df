// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/config/description.hpp>

#include <rmm/cuda_device.hpp>
#include <rmm/resource_ref.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace rmm::config {

/// The form a key's value takes, in TOML and in the environment.
enum class value_kind {
  boolean,            ///< true / false
  integer,            ///< whole number in [minimum, maximum]
  size,               ///< bytes: integer, or "512MiB"
  size_or_percent,    ///< bytes, "512MiB", or "50%" of free device memory
  size_list,          ///< ascending list of sizes (TOML array; comma-separated in the environment)
  choice,             ///< one of `choices`
  file_name_pattern,  ///< file name; %p expands to the process id, %d to the device, %% to %
};

/// One key of a layer type or of [shim]: its name, the form of its value, its default and its limits.
struct key_schema {
  std::string_view name{};                  ///< the key, as the configuration file spells it
  value_kind kind{};                        ///< the form the value takes
  std::string_view description{};           ///< one sentence for the reference and `--check`
  parameter_value default_value{};          ///< std::monostate: no default
  std::string_view when_unset{};            ///< what an unset key without default means ("no maximum")
  bool required{false};                     ///< must be set by the file or the environment
  std::int64_t minimum{0};                  ///< integer: smallest value; size: smallest byte count
  std::int64_t maximum{INT64_MAX};          ///< integer: largest value
  bool power_of_two{false};                 ///< integer: must be a power of two
  std::vector<std::string_view> choices{};  ///< choice: the accepted values
};

/// How a layer sits in the stack.
enum class layer_kind {
  resource,      ///< allocates from CUDA (or the host) itself: only at the bottom
  suballocator,  ///< carves its upstream's memory: needs an upstream
  adaptor,       ///< wraps its upstream: needs an upstream
  code_only,     ///< needs C++ functions: cannot be described in a file
};

/// What the builder hands a layer's factory.
struct build_context {
  cuda_device_id device{};         ///< the device the stack is built for
  std::uint64_t free_bytes{};      ///< free device memory before the stack was built (for percentages)
  std::uint64_t total_bytes{};     ///< device capacity
  std::string_view bottom_type{};  ///< the type of the stack's last layer (what allocates from CUDA)
};

/// One resource or adaptor type: its name in the file, its keys, its checks and its factory.
struct layer_schema {
  std::string_view type{};         ///< the type, as the configuration file names it ("pool")
  layer_kind kind{};               ///< how a layer of this type sits in the stack
  std::string_view summary{};      ///< one line on what the type does
  std::vector<key_schema> keys{};  ///< the type's keys
  /// Rules between keys of one layer, checked once all values are known (may be null). Throws
  /// config_error naming the offending value.
  void (*check)(layer_description const& layer){nullptr};
  /// Rules that need the device's memory (sizes against free/total memory; may be null).
  void (*check_on_device)(layer_description const& layer, build_context const& context){nullptr};
  /// Constructs the layer; `upstream` is empty for resources. Null for code_only types.
  rmm::mr::any_device_resource (*build)(layer_description const& layer,
                                        build_context const& context,
                                        std::optional<rmm::mr::any_device_resource> upstream){nullptr};
  /// Why a code_only type cannot be described in a file.
  std::string_view code_only_reason{};

  /**
   * @brief The key named `name`.
   *
   * @param name the key, as the configuration file spells it
   * @return the key's schema, or null when the type has no such key
   */
  [[nodiscard]] key_schema const* find_key(std::string_view name) const noexcept;
  /**
   * @brief Whether a layer of this type needs a layer below it.
   *
   * @return true for suballocators and adaptors
   */
  [[nodiscard]] bool needs_upstream() const noexcept
  {
    return kind == layer_kind::suballocator || kind == layer_kind::adaptor;
  }
};

/**
 * @brief Every resource and adaptor type the library has, in the order the reference lists them.
 *
 * @return the schemas, with static storage
 */
[[nodiscard]] std::span<layer_schema const> layer_schemas();
/**
 * @brief The type named `type`.
 *
 * @param type the type, as the configuration file spells it ("pool")
 * @return its schema, or null for an unknown type
 */
[[nodiscard]] layer_schema const* find_layer_schema(std::string_view type) noexcept;
/**
 * @brief The keys of the [shim] table.
 *
 * @return the keys' schemas, with static storage
 */
[[nodiscard]] std::span<key_schema const> shim_schema();

/**
 * @brief The "expected" text of an error about `key`'s value.
 *
 * @param key the key
 * @return what its kind accepts: "true or false", "a size: bytes as an integer, or a string like
 * \"512MiB\" or \"8GiB\"", and so on
 */
[[nodiscard]] std::string describe_expected(key_schema const& key);

/**
 * @brief Among `candidates`, the one closest to `word` if it is close enough to be a likely typo.
 *
 * Close enough: at most two edits (letters compared case-insensitively) and fewer edits than half
 * the candidate's length.
 *
 * @param word what the user wrote
 * @param candidates the valid names
 * @return the closest candidate, or nullopt when none is close enough
 */
[[nodiscard]] std::optional<std::string_view> closest_match(std::string_view word,
                                                            std::span<std::string_view const> candidates);

}  // namespace rmm::config
