#pragma once

// Shared by the configuration tests.

#include <rmm/config/config.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace rmm::config::test {

inline std::filesystem::path example(std::string_view name)
{
  return std::filesystem::path{RMM_CONFIG_EXAMPLES_DIR} / name;
}

/// Loads `toml` as "test.toml" and returns the error it must raise.
inline config_error load_error(std::string_view toml, environment const& env = {})
{
  try {
    (void)load_string(toml, "test.toml", env);
  } catch (config_error const& error) {
    return error;
  }
  ADD_FAILURE() << "accepted:\n" << toml;
  return config_error{{}, "", ""};
}

inline size_spec const& size_of(parameter const& setting) { return std::get<size_spec>(setting.value); }

}  // namespace rmm::config::test
