// SPDX-License-Identifier: Apache-2.0
#include <rmm/environment_variables.hpp>

#include <cstdlib>
#include <string>

namespace rmm {

std::optional<std::string_view> environment_value(env_var variable) noexcept
{
  // The names are views of literals, each followed by its NUL: getenv can take them as they are.
  char const* value = std::getenv(name_of(variable).data());  // NOLINT(bugprone-suspicious-stringview-data-usage)
  if (value == nullptr) { return std::nullopt; }
  return std::string_view{value};
}

}  // namespace rmm
