#include "settings.hpp"

#include <rmm/config/boolean.hpp>
#include <rmm/config/error.hpp>
#include <rmm/config/load.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <variant>

namespace rmm::shim {

namespace {

shim_settings& mutable_settings() noexcept { return detail::make_settings(); }

template <class T>
T value_or(rmm::config::stack_description const& stack, std::string_view key, T fallback)
{
  try {
    auto const& value = stack.shim_setting(key).value;
    auto const* typed = std::get_if<T>(&value);
    return typed != nullptr ? *typed : fallback;
  } catch (std::out_of_range const&) {
    return fallback;
  }
}

/// The kill switch, read before anything else: with RMM_SHIM_ENABLED=false the shim passes every
/// call through even when the configuration file is broken.
bool switched_off() noexcept
{
  char const* value = std::getenv("RMM_SHIM_ENABLED");
  return value != nullptr && rmm::config::parse_boolean(value) == false;
}

}  // namespace

shim_settings& detail::make_settings() noexcept
{
  static auto* const made = [] {
    auto* s = new shim_settings;  // never destroyed: read by hooks during exit
    detail::settings_instance.store(s, std::memory_order_release);
    return s;
  }();
  return *made;
}

void load_settings()
{
  auto& s = mutable_settings();
  if (switched_off()) {
    s.enabled = false;
    return;
  }
  try {
    s.stack = rmm::config::load_from_environment(rmm::config::environment::from_process());
  } catch (rmm::config::config_error const& e) {
    std::fflush(stdout);
    fmt::print(stderr,
               "rmm shim: {}\nrmm shim: the program was not started; fix the configuration (rmm-run --check shows "
               "it), or set RMM_SHIM_ENABLED=false to run it without the shim\n",
               e.what());
    std::fflush(stderr);
    std::_Exit(78);  // EX_CONFIG
  }
  s.enabled       = value_or(s.stack, "enabled", true);
  s.verbose       = value_or(s.stack, "verbose", false);
  s.stats_at_exit = value_or(s.stack, "stats_at_exit", false);
  s.report_file   = value_or(s.stack, "report_file", std::string{});
  s.log_file      = value_or(s.stack, "log_file", std::string{});
  s.free          = value_or(s.stack, "free_policy", std::string{"device_wide"}) == "stream_ordered"
                      ? free_policy::stream_ordered
                      : free_policy::device_wide;
}

}  // namespace rmm::shim
