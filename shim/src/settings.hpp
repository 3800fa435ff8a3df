// SPDX-License-Identifier: Apache-2.0
#pragma once

// The shim's settings: the [shim] table of the configuration, each key with its environment twin
// (RMM_SHIM_<KEY>), read once when the shim is loaded. Their names, types and defaults are
// rmm::config's list of [shim] keys (rmm/config/shim_settings.hpp): one member per key, named as
// the key; docs/configuration.md lists them.

#include <rmm/config/description.hpp>
#include <rmm/config/shim_settings.hpp>

#include <atomic>

namespace rmm::shim {

/// What cuMemFree / cudaFree do with a block the shim handed out (the key `free_policy`).
using rmm::config::free_policy;

/// Every [shim] key (enabled: false is the kill switch, a pure pass-through; verbose; stats_at_exit;
/// report_file; log_file; free_policy), typed, and the validated configuration they came with.
struct shim_settings : rmm::config::shim_values {
  rmm::config::stack_description stack{};  ///< the validated configuration
};

namespace detail {
/// Made on first use and never destroyed (hooks read it during exit); read without a call.
inline std::atomic<shim_settings*> settings_instance{nullptr};
[[nodiscard]] shim_settings& make_settings() noexcept;
}  // namespace detail

/// The settings, loaded when the shim was loaded (defaults before that).
[[nodiscard]] inline shim_settings const& settings() noexcept
{
  if (auto const* s = detail::settings_instance.load(std::memory_order_acquire); s != nullptr) [[likely]] { return *s; }
  return detail::make_settings();
}

/// Loads the configuration (RMM_CONFIG's file or the built-in stack, with environment overrides).
/// A bad configuration prints its error (file:line:column) and ends the process: a program never
/// runs unmanaged by surprise.
void load_settings();

}  // namespace rmm::shim
