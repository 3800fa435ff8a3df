#pragma once

// The shim's settings: the [shim] table of the configuration, each key with its environment twin
// (RMM_SHIM_<KEY>), read once when the shim is loaded. docs/configuration.md lists them.

#include <rmm/config/description.hpp>

#include <atomic>
#include <string>

namespace rmm::shim {

/// What cuMemFree / cudaFree do with a block the shim handed out.
enum class free_policy : unsigned char {
  /// The block is reused only once all work submitted before the free, on any stream, has
  /// completed (cudaFree's own promise): frees are collected into epochs fenced by events.
  device_wide,
  /// The block goes back at once, ordered on the legacy default stream, for programs that finish
  /// or order all work on memory before they free it (a stream-ordered program's habits).
  stream_ordered,
};

struct shim_settings {
  bool enabled{true};         ///< false: pure pass-through (the kill switch)
  bool verbose{false};        ///< print the stack and the hooks at start
  bool stats_at_exit{false};  ///< print the report to stderr at exit
  std::string report_file{};  ///< also write the report as JSON here at exit
  std::string log_file{};     ///< log every allocation of every device (CSV)
  free_policy free{free_policy::device_wide};
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
