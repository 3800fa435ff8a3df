// SPDX-License-Identifier: Apache-2.0
#include <rmm/config/description.hpp>
#include <rmm/config/schema.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rmm::config {

namespace {

template <class Parameters>
auto& find_parameter(Parameters& parameters, std::string_view key, std::string_view owner)
{
  auto it = std::find_if(parameters.begin(), parameters.end(), [&](auto const& p) { return p.key == key; });
  if (it == parameters.end()) {
    throw std::out_of_range{std::string{owner} + " has no parameter '" + std::string{key} + "'"};
  }
  return *it;
}

}  // namespace

char const* to_string(value_origin origin) noexcept
{
  switch (origin) {
    case value_origin::built_in: return "default";
    case value_origin::file: return "file";
    case value_origin::environment: return "environment";
  }
  return "?";
}

std::string_view layer_description::type() const noexcept { return schema == nullptr ? "?" : schema->type; }

parameter const& layer_description::at(std::string_view key) const
{
  return find_parameter(parameters, key, "layer " + std::string{type()});
}

parameter& layer_description::at(std::string_view key)
{
  return find_parameter(parameters, key, "layer " + std::string{type()});
}

parameter const& stack_description::shim_setting(std::string_view key) const
{
  return find_parameter(shim, key, "[shim]");
}

}  // namespace rmm::config
