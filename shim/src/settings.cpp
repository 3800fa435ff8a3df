// SPDX-License-Identifier: Apache-2.0
#include "settings.hpp"

#include <rmm/config/error.hpp>
#include <rmm/config/load.hpp>
#include <rmm/config/shim_settings.hpp>

#include <rmm/environment_variables.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace rmm::shim {

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
  auto& s = detail::make_settings();
  // The kill switch, read before anything else: switched off, the shim passes every call through
  // even when the configuration file is broken.
  if (rmm::config::shim_switched_off()) {
    s.enabled = false;
    return;
  }
  try {
    s.stack = rmm::config::load_from_environment(rmm::config::environment::from_process());
  } catch (rmm::config::config_error const& e) {
    std::fflush(stdout);
    fmt::print(stderr,
               "rmm shim: {}\nrmm shim: the program was not started; fix the configuration (rmm-run --check shows "
               "it), or set {}=false to run it without the shim\n",
               e.what(), rmm::name_of(rmm::env_var::shim_enabled));
    std::fflush(stderr);
    std::_Exit(78);  // EX_CONFIG
  }
  static_cast<rmm::config::shim_values&>(s) = rmm::config::read_shim_values(s.stack);
}

}  // namespace rmm::shim
