// SPDX-License-Identifier: Apache-2.0
#include "values.hpp"
#include <rmm/format_bytes.hpp>

#include <rmm/config/boolean.hpp>
#include <rmm/config/environment.hpp>
#include <rmm/config/file_name_pattern.hpp>
#include <rmm/config/print.hpp>

#include <rmm/mr/device_memory_resource.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>

namespace rmm::config::detail {

namespace {

std::string_view trim(std::string_view text)
{
  auto const is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) { text.remove_prefix(1); }
  while (!text.empty() && is_space(text.back())) { text.remove_suffix(1); }
  return text;
}

std::optional<value_problem> check_size(key_schema const& key, size_spec const& size, std::string const& shown)
{
  if (size.is_percent) { return std::nullopt; }  // parse_size keeps percentages in (0, 100]
  if (size.bytes > rmm::mr::max_allocation_size) {
    return value_problem{shown, "a size below 8 EiB (2^63 bytes): no allocation can be larger"};
  }
  auto const minimum = static_cast<std::uint64_t>(key.minimum);
  if (size.bytes < minimum) {
    return value_problem{shown,
                         minimum == 1 ? "a size above 0 bytes" : fmt::format("a size of at least {} bytes", minimum)};
  }
  if (key.maximum != INT64_MAX && size.bytes > static_cast<std::uint64_t>(key.maximum)) {
    return value_problem{
      shown, fmt::format("a size of at most {}", rmm::format_bytes_short(static_cast<std::uint64_t>(key.maximum)))};
  }
  if (key.power_of_two && !std::has_single_bit(size.bytes)) {
    return value_problem{shown, "a power of two, like 256, 4096 or \"64KiB\""};
  }
  return std::nullopt;
}

std::variant<parameter_value, value_problem> parse_boolean_text(std::string_view text)
{
  if (auto const value = parse_boolean(text)) { return parameter_value{*value}; }
  return value_problem{detail::quoted(text), std::string{boolean_expectation}};
}

std::variant<parameter_value, value_problem> parse_integer(key_schema const& key, std::string_view text)
{
  std::int64_t value{};
  auto const [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
    return value_problem{detail::quoted(text), describe_expected(key)};
  }
  return parameter_value{value};
}

std::variant<parameter_value, value_problem> parse_size_list(key_schema const& key, std::string_view text)
{
  std::vector<std::uint64_t> sizes;
  std::size_t index = 0;
  while (true) {
    auto const comma = text.find(',');
    auto const item  = trim(text.substr(0, comma));
    auto parsed      = parse_size_text(key, item);
    if (auto* problem = std::get_if<value_problem>(&parsed)) {
      problem->element = index;
      return std::move(*problem);
    }
    sizes.push_back(std::get<size_spec>(parsed).bytes);
    if (comma == std::string_view::npos) { break; }
    text.remove_prefix(comma + 1);
    ++index;
  }
  return parameter_value{std::move(sizes)};
}

}  // namespace

std::string quoted(std::string_view text)
{
  constexpr std::size_t longest = 60;
  std::string result{"\""};
  for (std::size_t i = 0; i < text.size() && i < longest; ++i) {
    auto const c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      result += "\\n";
    } else if (c == '"' || c == '\\') {
      result += '\\';
      result += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      result += fmt::format("\\x{:02x}", c);
    } else {
      result += static_cast<char>(c);
    }
  }
  if (text.size() > longest) { result += "..."; }
  return result + "\"";
}

std::variant<size_spec, value_problem> parse_size_text(key_schema const& key, std::string_view text)
{
  auto parsed = parse_size(text, key.kind == value_kind::size_or_percent);
  if (auto const* problem = std::get_if<size_problem>(&parsed)) {
    return value_problem{detail::quoted(text), problem->expected};
  }
  auto const size = std::get<size_spec>(parsed);
  if (auto problem = check_size(key, size, detail::quoted(text))) { return std::move(*problem); }
  return size;
}

std::variant<parameter_value, value_problem> parse_value_text(key_schema const& key, std::string_view text)
{
  std::variant<parameter_value, value_problem> result = value_problem{};
  switch (key.kind) {
    case value_kind::boolean: result = parse_boolean_text(text); break;
    case value_kind::integer: result = parse_integer(key, trim(text)); break;
    case value_kind::size:
    case value_kind::size_or_percent: {
      auto size = parse_size_text(key, text);
      if (auto* problem = std::get_if<value_problem>(&size)) { return std::move(*problem); }
      result = parameter_value{std::get<size_spec>(size)};
      break;
    }
    case value_kind::size_list: result = parse_size_list(key, text); break;
    case value_kind::choice: result = parameter_value{std::string{trim(text)}}; break;
    case value_kind::file_name_pattern: result = parameter_value{std::string{text}}; break;
  }
  if (auto const* value = std::get_if<parameter_value>(&result)) {
    if (auto problem = check_value(key, *value)) {
      if (key.kind != value_kind::size_list) { problem->found = detail::quoted(text); }
      return std::move(*problem);
    }
  }
  return result;
}

std::optional<value_problem> check_value(key_schema const& key, parameter_value const& value)
{
  switch (key.kind) {
    case value_kind::boolean: return std::nullopt;
    case value_kind::integer: {
      auto const number = std::get<std::int64_t>(value);
      if (number < key.minimum || number > key.maximum) {
        return value_problem{std::to_string(number), describe_expected(key)};
      }
      return std::nullopt;
    }
    case value_kind::size:
    case value_kind::size_or_percent: {
      auto const& size = std::get<size_spec>(value);
      return check_size(key, size, to_toml_text(size));
    }
    case value_kind::size_list: {
      auto const& sizes = std::get<std::vector<std::uint64_t>>(value);
      if (sizes.empty()) { return value_problem{"an empty list", describe_expected(key)}; }
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        auto const element = size_spec{.bytes = sizes[i], .percent = 0, .is_percent = false};
        if (auto problem = check_size(key, element, to_toml_text(element))) {
          problem->element = i;
          return problem;
        }
        if (i > 0 && sizes[i] <= sizes[i - 1]) {
          return value_problem{
            fmt::format("{} after {}", to_toml_text(element),
                        to_toml_text(size_spec{.bytes = sizes[i - 1], .percent = 0, .is_percent = false})),
            "bin sizes in strictly ascending order, each listed once", i};
        }
      }
      return std::nullopt;
    }
    case value_kind::choice: {
      auto const& text = std::get<std::string>(value);
      if (std::find(key.choices.begin(), key.choices.end(), text) == key.choices.end()) {
        auto expected = describe_expected(key);
        if (auto const guess = closest_match(text, key.choices)) {
          expected += fmt::format(" (did you mean \"{}\"?)", *guess);
        }
        return value_problem{detail::quoted(text), std::move(expected)};
      }
      return std::nullopt;
    }
    case value_kind::file_name_pattern: {
      auto const& pattern = std::get<std::string>(value);
      if (auto problem = file_name_pattern_problem(pattern)) {
        return value_problem{pattern.empty() ? *problem : detail::quoted(pattern) + " with " + *problem,
                             describe_expected(key)};
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

layer_description empty_layer(layer_schema const& schema, value_origin origin, source_location location)
{
  layer_description layer{.schema = &schema, .origin = origin, .location = std::move(location), .parameters = {}};
  for (auto const& key : schema.keys) { layer.parameters.push_back(parameter{.key = std::string{key.name}}); }
  return layer;
}

std::vector<parameter> empty_shim_settings()
{
  std::vector<parameter> settings;
  for (auto const& key : shim_schema()) { settings.push_back(parameter{.key = std::string{key.name}}); }
  return settings;
}

namespace {

void apply_defaults(std::vector<parameter>& parameters, std::span<key_schema const> keys, auto const& on_missing)
{
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto& setting = parameters[i];
    if (setting.is_set()) { continue; }
    if (keys[i].required) { on_missing(keys[i]); }
    setting.value    = keys[i].default_value;
    setting.origin   = value_origin::built_in;
    setting.location = {};
  }
}

void check_shape(stack_description const& stack)
{
  if (stack.layers.empty()) {
    throw config_error{source_location{.file = stack.source}, "an empty resource list",
                       "at least one [[resource]] table, ending with a resource such as type = \"cuda\""};
  }
  for (std::size_t i = 0; i < stack.layers.size(); ++i) {
    auto const& layer    = stack.layers[i];
    auto const is_bottom = i + 1 == stack.layers.size();
    if (layer.schema->needs_upstream() && is_bottom) {
      throw config_error{
        layer.location,
        fmt::format("{} \"{}\" at the bottom of the stack, with no upstream",
                    layer.schema->kind == layer_kind::adaptor ? "adaptor" : "sub-allocator", layer.type()),
        "a resource that allocates by itself below it: \"cuda\", \"cuda_async\", \"managed\", \"pinned_host\" or "
        "\"system\""};
    }
    if (!layer.schema->needs_upstream() && !is_bottom) {
      throw config_error{
        layer.location,
        fmt::format("resource \"{}\" above {} more layer(s)", layer.type(), stack.layers.size() - i - 1),
        fmt::format("\"{}\" as the last [[resource]]: it allocates by itself and takes no upstream", layer.type())};
    }
  }
}

}  // namespace

void finish_and_validate(stack_description& stack)
{
  if (stack.layers.size() > max_stack_depth) {
    throw config_error{stack.layers[max_stack_depth].location, fmt::format("a stack of {} layers", stack.layers.size()),
                       fmt::format("at most {} layers ([[resource]] tables): every allocation passes through each "
                                   "layer on the allocating thread's stack",
                                   max_stack_depth)};
  }
  for (auto& layer : stack.layers) {
    apply_defaults(layer.parameters, layer.schema->keys, [&](key_schema const& key) {
      throw config_error{layer.location, fmt::format("a {} layer without {}", layer.type(), key.name),
                         fmt::format("{} = <{}> in this [[resource]] table (or {} in the environment)", key.name,
                                     describe_expected(key), override_variable(layer.type(), key.name))};
    });
  }
  apply_defaults(stack.shim, shim_schema(), [](key_schema const&) {});
  check_shape(stack);
  for (auto const& layer : stack.layers) {
    if (layer.schema->check != nullptr) { layer.schema->check(layer); }
  }
}

}  // namespace rmm::config::detail
