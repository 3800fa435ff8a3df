// SPDX-License-Identifier: Apache-2.0
#include <rmm/config/print.hpp>
#include <rmm/format_bytes.hpp>

#include <fmt/format.h>

#include <string>

namespace rmm::config {

namespace {

/// "default", "file FILE:LINE:COLUMN" or "environment VARIABLE".
std::string origin_text(parameter const& setting)
{
  // fmt rather than `text += " " + ...`, which gcc 12 at -O3 wrongly flags (-Wrestrict).
  switch (setting.origin) {
    case value_origin::built_in: break;
    case value_origin::file: return fmt::format("{} {}", to_string(setting.origin), setting.location.to_string());
    case value_origin::environment: return fmt::format("{} {}", to_string(setting.origin), setting.location.variable);
  }
  return std::string{to_string(setting.origin)};
}

std::string value_text(parameter const& setting, key_schema const* key, std::optional<build_context> const& device)
{
  if (!setting.is_set()) {
    return fmt::format("(unset: {})", key != nullptr ? key->when_unset : std::string_view{"no value"});
  }
  auto text = value_to_toml(setting.value);
  if (auto const* size = std::get_if<size_spec>(&setting.value)) {
    if (size->is_percent) {
      text += device ? fmt::format(" = {} of {} free", rmm::format_bytes_short(resolve_size(*size, device->free_bytes)),
                                   rmm::format_bytes_short(device->free_bytes))
                     : std::string{" of free memory"};
    } else if (size->bytes >= 1024 && to_toml_text(*size).front() != '"') {
      text += fmt::format(" ({})", rmm::format_bytes_short(size->bytes));
    }
  }
  return text;
}

void append_parameters(std::string& out,
                       std::vector<parameter> const& parameters,
                       std::span<key_schema const> keys,
                       std::optional<build_context> const& device)
{
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    auto const& setting = parameters[i];
    auto const line =
      fmt::format("{} = {}", setting.key, value_text(setting, i < keys.size() ? &keys[i] : nullptr, device));
    out += fmt::format("       {:<58} {}\n", line, origin_text(setting));
  }
}

}  // namespace

std::string value_to_toml(parameter_value const& value)
{
  struct visitor {
    std::string operator()(std::monostate) const { return "(unset)"; }
    std::string operator()(bool flag) const { return flag ? "true" : "false"; }
    std::string operator()(std::int64_t number) const { return std::to_string(number); }
    std::string operator()(std::string const& text) const { return fmt::format("\"{}\"", text); }
    std::string operator()(size_spec const& size) const { return to_toml_text(size); }
    std::string operator()(std::vector<std::uint64_t> const& sizes) const
    {
      std::string list;
      for (auto const size : sizes) {
        list += (list.empty() ? "" : ", ") + to_toml_text(size_spec{.bytes = size, .percent = 0, .is_percent = false});
      }
      return "[" + list + "]";
    }
  };
  return std::visit(visitor{}, value);
}

std::string describe(stack_description const& stack, std::optional<build_context> const& device)
{
  std::string out;
  auto const source = stack.stack_origin == value_origin::file ? stack.source : std::string{"the built-in stack"};
  out += fmt::format("stack from {}, top first (each layer allocates from the one below it)", source);
  if (device) {
    out += fmt::format("; device {}: {} free of {}", device->device.value(),
                       rmm::format_bytes_short(device->free_bytes), rmm::format_bytes_short(device->total_bytes));
  }
  out += ":\n";
  for (std::size_t i = 0; i < stack.layers.size(); ++i) {
    auto const& layer = stack.layers[i];
    auto const head   = fmt::format("  {}. {}", i + 1, layer.type());
    out +=
      fmt::format("{:<65} {}\n", head,
                  layer.origin == value_origin::file ? "file " + layer.location.to_string() : std::string{"default"});
    append_parameters(out, layer.parameters, layer.schema->keys, device);
  }
  out += "[shim] (read by the preload shim)\n";
  append_parameters(out, stack.shim, shim_schema(), device);
  return out;
}

}  // namespace rmm::config
