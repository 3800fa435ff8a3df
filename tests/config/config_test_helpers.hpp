// SPDX-License-Identifier: Apache-2.0
#pragma once

// Shared by the configuration tests.

#include <rmm/config/config.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
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

/// Sets (or unsets, with nullopt) a variable of the process for one scope.
class scoped_variable {
 public:
  scoped_variable(char const* name, std::optional<std::string> const& value) : name_{name}
  {
    if (char const* old = std::getenv(name)) { old_ = old; }
    set(value);
  }
  scoped_variable(scoped_variable const&)            = delete;
  scoped_variable& operator=(scoped_variable const&) = delete;
  ~scoped_variable() { set(old_); }

 private:
  void set(std::optional<std::string> const& value) const
  {
    if (value) {
      ::setenv(name_, value->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  char const* name_;
  std::optional<std::string> old_;
};

inline size_spec const& size_of(parameter const& setting) { return std::get<size_spec>(setting.value); }

}  // namespace rmm::config::test
