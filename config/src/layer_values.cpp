// SPDX-License-Identifier: Apache-2.0
#include "layer_values.hpp"
#include <rmm/format_bytes.hpp>

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace rmm::config::detail {

namespace {

template <class T>
T const* typed(layer_description const& layer, std::string_view key)
{
  auto const& value = layer.at(key).value;
  if (std::holds_alternative<std::monostate>(value)) { return nullptr; }
  if (auto const* typed_value = std::get_if<T>(&value)) { return typed_value; }
  throw std::logic_error{fmt::format("rmm::config: parameter {}.{} holds an unexpected value type", layer.type(), key)};
}

}  // namespace

std::optional<size_spec> size_value(layer_description const& layer, std::string_view key)
{
  auto const* value = typed<size_spec>(layer, key);
  return value ? std::optional{*value} : std::nullopt;
}

std::optional<std::uint64_t> resolved_size(layer_description const& layer,
                                           std::string_view key,
                                           build_context const& context)
{
  auto const size = size_value(layer, key);
  if (!size) { return std::nullopt; }
  return resolve_size(*size, context.free_bytes);
}

bool bool_value(layer_description const& layer, std::string_view key)
{
  auto const* value = typed<bool>(layer, key);
  return value != nullptr && *value;
}

std::optional<std::int64_t> integer_value(layer_description const& layer, std::string_view key)
{
  auto const* value = typed<std::int64_t>(layer, key);
  return value ? std::optional{*value} : std::nullopt;
}

std::optional<std::string> string_value(layer_description const& layer, std::string_view key)
{
  auto const* value = typed<std::string>(layer, key);
  return value ? std::optional{*value} : std::nullopt;
}

std::vector<std::uint64_t> size_list_value(layer_description const& layer, std::string_view key)
{
  auto const* value = typed<std::vector<std::uint64_t>>(layer, key);
  return value ? *value : std::vector<std::uint64_t>{};
}

std::string describe_size_setting(parameter const& setting, std::optional<build_context> context)
{
  auto const* size = std::get_if<size_spec>(&setting.value);
  if (size == nullptr) { return setting.key + " unset"; }
  auto text = fmt::format("{} = {}", setting.key, to_toml_text(*size));
  if (size->is_percent && context) {
    text += fmt::format(" ({} of {} free)", rmm::format_bytes_short(resolve_size(*size, context->free_bytes)),
                        rmm::format_bytes_short(context->free_bytes));
  }
  return text;
}

parameter const& set_last(parameter const& first, parameter const& second) noexcept
{
  return static_cast<int>(first.origin) > static_cast<int>(second.origin) ? first : second;
}

void fail_at(parameter const& setting, std::string found, std::string expected)
{
  throw config_error{setting.location, std::move(found), std::move(expected)};
}

void check_fits_device(layer_description const& layer, std::string_view key, build_context const& context)
{
  auto const bytes = resolved_size(layer, key, context);
  if (bytes && *bytes > context.total_bytes) {
    fail_at(layer.at(key), describe_size_setting(layer.at(key), context),
            fmt::format("at most the device's {} of memory (device {})", rmm::format_bytes_short(context.total_bytes),
                        context.device.value()));
  }
}

}  // namespace rmm::config::detail
