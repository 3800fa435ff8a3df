// SPDX-License-Identifier: Apache-2.0
#pragma once

// The keys of the [shim] table, written once: each key's name, C++ type and default are one line of
// RMM_CONFIG_SHIM_KEYS. The schema (shim_schema(), which adds each key's description) and the
// preload shim's typed settings (shim_values) are generated from that list, so a key the code
// misspells does not compile and no default is written twice.

#include <rmm/config/description.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rmm::config {

/// When memory freed with cudaFree / cuMemFree is reused (the [shim] key `free_policy`).
enum class free_policy : unsigned char {
  /// Once all work submitted before the free, on any stream, has completed (cudaFree's own
  /// promise): frees are collected into epochs fenced by events.
  device_wide,
  /// At once, ordered on the legacy default stream, for programs that finish or order all work on
  /// memory before they free it (a stream-ordered program's habits).
  stream_ordered,
};

/// The names of free_policy's values, as the configuration file spells them, in the enum's order.
inline constexpr std::array<std::string_view, 2> free_policy_names{"device_wide", "stream_ordered"};

/**
 * @brief The name of a free policy, as the configuration file spells it.
 *
 * @param policy the policy
 * @return "device_wide" or "stream_ordered"
 */
[[nodiscard]] constexpr std::string_view name_of(free_policy policy) noexcept
{
  return free_policy_names[static_cast<std::size_t>(policy)];
}

/**
 * The [shim] keys, in the order the reference lists them: RMM_CONFIG_SHIM_KEYS(KEY) expands
 * KEY(name, type, default) once per key. `name` is the key as the file spells it (upper case after
 * RMM_SHIM_ in the environment); `type` what the shim reads (bool for a boolean, std::int64_t for
 * an integer, std::string for a file name, empty when unset, an enumeration for a choice, its names
 * in NAME_names); `default` the
 * value before any file or variable sets one. A new key also needs its description in
 * config/src/shim_settings.cpp, which refuses to compile without it.
 */
#define RMM_CONFIG_SHIM_KEYS(KEY)                                                       \
  KEY(enabled, bool, true)                                                              \
  KEY(verbose, bool, false)                                                             \
  KEY(stats_at_exit, bool, false)                                                       \
  KEY(report_file, std::string, std::string{})                                          \
  KEY(log_file, std::string, std::string{})                                             \
  KEY(free_policy, ::rmm::config::free_policy, ::rmm::config::free_policy::device_wide) \
  KEY(watch_streams, bool, true)                                                        \
  KEY(control, bool, true)                                                              \
  KEY(pause_timeout, std::int64_t, 300)                                                 \
  KEY(pause_device_wait, std::int64_t, 60)                                              \
  KEY(pause_keeps_host_memory, bool, false)                                             \
  KEY(physical_cache, bool, false)

/// The [shim] keys, one enumerator per key, in the order of RMM_CONFIG_SHIM_KEYS.
enum class shim_key : unsigned char {
#define RMM_CONFIG_SHIM_KEY_ENUMERATOR(name, type, default_value) name,
  RMM_CONFIG_SHIM_KEYS(RMM_CONFIG_SHIM_KEY_ENUMERATOR)
#undef RMM_CONFIG_SHIM_KEY_ENUMERATOR
};

/// The names of the [shim] keys, as the configuration file spells them, in shim_key's order.
inline constexpr std::array shim_key_names{
#define RMM_CONFIG_SHIM_KEY_NAME(name, type, default_value) std::string_view{#name},
  RMM_CONFIG_SHIM_KEYS(RMM_CONFIG_SHIM_KEY_NAME)
#undef RMM_CONFIG_SHIM_KEY_NAME
};

/// How many keys [shim] has.
inline constexpr std::size_t shim_key_count = shim_key_names.size();

/**
 * @brief The name of a [shim] key, as the configuration file spells it.
 *
 * @param key the key
 * @return "enabled", "verbose", ...
 */
[[nodiscard]] constexpr std::string_view name_of(shim_key key) noexcept
{
  return shim_key_names[static_cast<std::size_t>(key)];
}

/// The [shim] settings, typed: one member per key of RMM_CONFIG_SHIM_KEYS, named as the key, holding
/// its default until read_shim_values() reads a stack.
struct shim_values {
#define RMM_CONFIG_SHIM_KEY_MEMBER(name, type, default_value) type name = default_value;
  RMM_CONFIG_SHIM_KEYS(RMM_CONFIG_SHIM_KEY_MEMBER)
#undef RMM_CONFIG_SHIM_KEY_MEMBER
};

/**
 * @brief The [shim] settings of a validated stack, typed.
 *
 * @param stack a stack from load() or load_from_environment()
 * @return every key's value; a key without a value (a file name left unset) keeps its default
 */
[[nodiscard]] shim_values read_shim_values(stack_description const& stack);

/**
 * @brief The [shim] parameter of `key`, by its enumerator rather than its spelling.
 *
 * @param stack the stack
 * @param key the key
 * @return the parameter, with its value and where the value came from
 */
[[nodiscard]] parameter const& shim_setting(stack_description const& stack, shim_key key);

/**
 * @brief Whether the kill switch is off: RMM_SHIM_ENABLED is set to a false value (false, 0, no,
 * off, in any case).
 *
 * The shim and rmm-run read it before the configuration, so that a broken file never stops a
 * program run without the shim. A value parse_boolean() cannot read is not off: loading the
 * configuration then refuses it, naming the words it accepts.
 *
 * @return true when the shim is to pass every call through and read no configuration
 */
[[nodiscard]] bool shim_switched_off() noexcept;

}  // namespace rmm::config
