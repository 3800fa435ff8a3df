// SPDX-License-Identifier: Apache-2.0
#pragma once

// Every environment variable rmm reads by name, in one table: its name, what it sets, and how it
// is used. Core, the configuration library, the preload shim and rmm-run read these variables
// only through environment_value() and name them only through this table, so a name is written
// once and a variable that nobody documents cannot be read.
//
// The configuration's overrides (RMM_<TYPE>_<KEY>, RMM_SHIM_<KEY>) are not listed here: the schema
// defines them, and rmm::config::environment_variables() adds them to this table for the reference
// (docs/configuration.md).

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace rmm {

/// The variables of the table, one enumerator per row, in the table's order.
enum class env_var : unsigned char {
  config,           ///< RMM_CONFIG
  log_file,         ///< RMM_LOG_FILE
  debug_log_file,   ///< RMM_DEBUG_LOG_FILE
  debug_log_level,  ///< RMM_DEBUG_LOG_LEVEL
  logging_level,    ///< RMM_LOGGING_LEVEL
  shim_enabled,     ///< RMM_SHIM_ENABLED
  shim_run_start,   ///< RMM_SHIM_RUN_START
};

/// How rmm uses a variable of the table.
enum class env_var_use : unsigned char {
  read,                 ///< read where it is needed
  override_read_early,  ///< also a configuration override, and read by name before the configuration
  set_by_rmm,           ///< written by rmm for the processes a program starts, and read by them
  never_read,           ///< a build option's name: reserved, so that it is never taken for an override
};

/// One row of the table.
struct env_var_info {
  env_var id;                ///< the enumerator the row belongs to
  std::string_view name;     ///< the variable's name, "RMM_DEBUG_LOG_LEVEL"
  std::string_view meaning;  ///< one sentence, as docs/configuration.md prints it (no '|')
  env_var_use use;           ///< how rmm uses it
};

/// The table, in the order of env_var (a static_assert below keeps it so).
inline constexpr std::array<env_var_info, 7> env_vars{{
  {env_var::config, "RMM_CONFIG",
   "the configuration file; without it, the built-in stack (`rmm-run --config` wins over it)", env_var_use::read},
  {env_var::log_file, "RMM_LOG_FILE", "the file of a `logging_resource_adaptor` constructed without one (C++)",
   env_var_use::read},
  {env_var::debug_log_file, "RMM_DEBUG_LOG_FILE", "where the debug log goes, appended; stderr without it",
   env_var_use::read},
  {env_var::debug_log_level, "RMM_DEBUG_LOG_LEVEL",
   "the debug log's level: trace, debug, info (default), warn, error, critical, off", env_var_use::read},
  {env_var::logging_level, "RMM_LOGGING_LEVEL",
   "not read at run time: the name of the build option that compiles debug-log levels out, never taken for an "
   "override of `logging`",
   env_var_use::never_read},
  {env_var::shim_enabled, "RMM_SHIM_ENABLED",
   "the kill switch, read before the configuration: false (also 0, no, off) passes every call through to CUDA, even "
   "when the configuration is broken",
   env_var_use::override_read_early},
  {env_var::shim_run_start, "RMM_SHIM_RUN_START",
   "set by the shim for the processes the program starts (not by you): when its first process started (ns), so "
   "that none of them truncates a log another one wrote",
   env_var_use::set_by_rmm},
}};

static_assert(
  [] {
    for (std::size_t i = 0; i < env_vars.size(); ++i) {
      if (static_cast<std::size_t>(env_vars[i].id) != i) { return false; }
    }
    return true;
  }(),
  "rmm::env_vars lists its rows in the order of rmm::env_var");

/**
 * @brief The row of `variable`.
 *
 * @param variable the variable
 * @return its name, meaning and use
 */
[[nodiscard]] constexpr env_var_info const& info_of(env_var variable) noexcept
{
  return env_vars[static_cast<std::size_t>(variable)];
}

/**
 * @brief The name of `variable`.
 *
 * @param variable the variable
 * @return "RMM_CONFIG", "RMM_LOG_FILE", ...
 */
[[nodiscard]] constexpr std::string_view name_of(env_var variable) noexcept { return info_of(variable).name; }

/**
 * @brief The value of `variable` in the process environment, read now: the one place rmm reads a
 * variable of the table.
 *
 * Not cached: RMM_LOG_FILE may change between two adaptors, and the shim sets RMM_SHIM_RUN_START
 * itself. The view is valid until the environment changes (setenv, putenv).
 *
 * @param variable the variable
 * @return its value (possibly empty), or nullopt when it is not set
 */
[[nodiscard]] std::optional<std::string_view> environment_value(env_var variable) noexcept;

}  // namespace rmm
