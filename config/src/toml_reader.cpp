// SPDX-License-Identifier: Apache-2.0
// The only file that sees toml++: header-only, compiled here, so nothing built from this project
// needs the toml++ library at run time.

#include "toml_reader.hpp"

#include "values.hpp"

#include <rmm/config/print.hpp>
#include <rmm/config/schema.hpp>

#define TOML_ENABLE_FORMATTERS 0
#include <toml++/toml.h>

#include <fmt/format.h>

#include <regex>
#include <vector>

namespace rmm::config::detail {

namespace {

constexpr std::string_view top_level_keys[] = {"resource", "shim"};

std::string_view describe_type(toml::node const& node)
{
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

/// A short rendering of a scalar for messages: "\"512MB\"", "-1", "true".
std::string show(toml::node const& node)
{
  if (auto const* text = node.as_string()) { return detail::quoted(text->get()); }
  if (auto const* number = node.as_integer()) { return std::to_string(number->get()); }
  if (auto const* number = node.as_floating_point()) { return fmt::format("{}", number->get()); }
  if (auto const* flag = node.as_boolean()) { return flag->get() ? "true" : "false"; }
  return std::string{describe_type(node)};
}

class reader {
 public:
  explicit reader(std::string source_name) : source_name_{std::move(source_name)} {}

  [[nodiscard]] source_location at(toml::source_region const& region) const
  {
    return source_location{
      .file = source_name_, .line = region.begin.line, .column = region.begin.column, .variable = {}};
  }

  [[noreturn]] void fail(toml::source_region const& region, std::string found, std::string expected) const
  {
    throw config_error{at(region), std::move(found), std::move(expected)};
  }

  stack_description read(toml::table const& document) const
  {
    stack_description stack;
    stack.source = source_name_;
    stack.shim   = empty_shim_settings();
    for (auto const& [key, node] : document) {
      if (key.str() == "resource") {
        stack.layers       = read_layers(key, node);
        stack.stack_origin = value_origin::file;
      } else if (key.str() == "shim") {
        read_shim(key, node, stack.shim);
      } else {
        fail(key.source(), unknown_key_found(key.str(), "at the top level"),
             with_guess("[[resource]] tables and a [shim] table", key.str(), top_level_keys));
      }
    }
    return stack;
  }

 private:
  static std::string unknown_key_found(std::string_view key, std::string_view where)
  {
    return fmt::format("the unknown key {} {}", detail::quoted(key), where);
  }

  static std::string with_guess(std::string expected, std::string_view word, std::span<std::string_view const> names)
  {
    if (auto const guess = closest_match(word, names)) { expected += fmt::format(" (did you mean \"{}\"?)", *guess); }
    return expected;
  }

  std::vector<layer_description> read_layers(toml::key const& key, toml::node const& node) const
  {
    auto const* array = node.as_array();
    if (array == nullptr) {
      fail(key.source(), fmt::format("\"resource\" as {}", describe_type(node)),
           "an array of tables: one [[resource]] table per layer, top of the stack first");
    }
    std::vector<layer_description> layers;
    for (auto const& element : *array) {
      auto const* table = element.as_table();
      if (table == nullptr) {
        fail(element.source(), fmt::format("{} in the resource list", describe_type(element)),
             "a table per layer, like { type = \"cuda\" }");
      }
      layers.push_back(read_layer(*table));
    }
    if (layers.empty()) {
      fail(key.source(), "an empty resource list",
           "at least one [[resource]] table, ending with a resource such as type = \"cuda\"");
    }
    return layers;
  }

  layer_description read_layer(toml::table const& table) const
  {
    auto const* type_node = table.get("type");
    if (type_node == nullptr) {
      fail(table.source(), "a [[resource]] table without a type",
           "type = \"<name>\", for example type = \"pool\" (see docs/configuration.md)");
    }
    auto const* type_text = type_node->as_string();
    if (type_text == nullptr) {
      fail(type_node->source(), fmt::format("type = {} ({})", show(*type_node), describe_type(*type_node)),
           "the type as a string, like type = \"pool\"");
    }
    auto const& type   = type_text->get();
    auto const* schema = find_layer_schema(type);
    if (schema == nullptr) {
      std::vector<std::string_view> names;
      std::string list;
      for (auto const& known : layer_schemas()) {
        if (known.kind == layer_kind::code_only) { continue; }
        names.push_back(known.type);
        list += (list.empty() ? "" : ", ") + std::string{known.type};
      }
      fail(type_node->source(), fmt::format("the unknown type {}", detail::quoted(type)),
           with_guess("one of " + list, type, names));
    }
    if (schema->kind == layer_kind::code_only) {
      fail(type_node->source(), fmt::format("type \"{}\"", type),
           fmt::format("a type that a file can describe: {}", schema->code_only_reason));
    }

    auto layer = empty_layer(*schema, value_origin::file, at(type_node->source()));
    std::vector<std::string_view> key_names;
    for (auto const& k : schema->keys) { key_names.push_back(k.name); }
    for (auto const& [key, node] : table) {
      if (key.str() == "type") { continue; }
      auto const* key_schema = schema->find_key(key.str());
      if (key_schema == nullptr) {
        std::string expected;
        if (key_names.empty()) {
          expected = fmt::format("no other key: \"{}\" has no settings", type);
        } else {
          for (auto const name : key_names) { expected += (expected.empty() ? "one of " : ", ") + std::string{name}; }
          expected = with_guess(std::move(expected), key.str(), key_names);
        }
        fail(key.source(), unknown_key_found(key.str(), fmt::format("in a \"{}\" layer", type)), std::move(expected));
      }
      auto& setting    = layer.at(key.str());
      setting.value    = read_value(*key_schema, node);
      setting.origin   = value_origin::file;
      setting.location = at(node.source());
    }
    return layer;
  }

  void read_shim(toml::key const& key, toml::node const& node, std::vector<parameter>& settings) const
  {
    auto const* table = node.as_table();
    if (table == nullptr) { fail(key.source(), fmt::format("\"shim\" as {}", describe_type(node)), "a [shim] table"); }
    std::vector<std::string_view> names;
    for (auto const& k : shim_schema()) { names.push_back(k.name); }
    for (auto const& [name, value] : *table) {
      auto const key_name = name.str();  // lambdas capture it (not every compiler captures a structured binding)
      auto const known    = std::find_if(shim_schema().begin(), shim_schema().end(),
                                         [&](key_schema const& k) { return k.name == key_name; });
      if (known == shim_schema().end()) {
        std::string expected;
        for (auto const n : names) { expected += (expected.empty() ? "one of " : ", ") + std::string{n}; }
        fail(name.source(), unknown_key_found(name.str(), "in [shim]"),
             with_guess(std::move(expected), name.str(), names));
      }
      auto& setting =
        *std::find_if(settings.begin(), settings.end(), [&](parameter const& p) { return p.key == key_name; });
      setting.value    = read_value(*known, value);
      setting.origin   = value_origin::file;
      setting.location = at(value.source());
    }
  }

  [[noreturn]] void wrong_type(key_schema const& key, toml::node const& node) const
  {
    fail(node.source(), fmt::format("{} = {} ({})", key.name, show(node), describe_type(node)), describe_expected(key));
  }

  parameter_value read_value(key_schema const& key, toml::node const& node) const
  {
    auto const checked = [&](parameter_value value) {
      if (auto problem = check_value(key, value)) {
        fail(node.source(), fmt::format("{} = {}", key.name, problem->found), std::move(problem->expected));
      }
      return value;
    };
    switch (key.kind) {
      case value_kind::boolean:
        if (auto const* flag = node.as_boolean()) { return flag->get(); }
        wrong_type(key, node);
      case value_kind::integer:
        if (auto const* number = node.as_integer()) { return checked(number->get()); }
        wrong_type(key, node);
      case value_kind::size:
      case value_kind::size_or_percent: return read_size(key, node);
      case value_kind::size_list: return read_size_list(key, node);
      case value_kind::choice:
      case value_kind::file_name_pattern:
        if (auto const* text = node.as_string()) { return checked(std::string{text->get()}); }
        wrong_type(key, node);
    }
    wrong_type(key, node);
  }

  size_spec read_size(key_schema const& key, toml::node const& node) const
  {
    if (auto const* number = node.as_integer()) {
      if (number->get() < 0) {
        fail(node.source(), fmt::format("{} = {}", key.name, number->get()),
             "a size above 0 (sizes cannot be negative)");
      }
      auto const size =
        size_spec{.bytes = static_cast<std::uint64_t>(number->get()), .percent = 0, .is_percent = false};
      if (auto problem = check_value(key, size)) {
        fail(node.source(), fmt::format("{} = {}", key.name, number->get()), std::move(problem->expected));
      }
      return size;
    }
    if (auto const* text = node.as_string()) {
      auto parsed = parse_size_text(key, text->get());
      if (auto* problem = std::get_if<value_problem>(&parsed)) {
        fail(node.source(), fmt::format("{} = {}", key.name, problem->found), std::move(problem->expected));
      }
      return std::get<size_spec>(parsed);
    }
    wrong_type(key, node);
  }

  std::vector<std::uint64_t> read_size_list(key_schema const& key, toml::node const& node) const
  {
    auto const* array = node.as_array();
    if (array == nullptr) { wrong_type(key, node); }
    // Each element as a size of its own; the list rules (order, emptiness) afterwards.
    auto const element_key = key_schema{.name        = key.name,
                                        .kind        = value_kind::size,
                                        .description = key.description,
                                        .minimum     = key.minimum,
                                        .maximum     = key.maximum};
    std::vector<std::uint64_t> sizes;
    for (auto const& element : *array) {
      if (!element.is_integer() && !element.is_string()) {
        fail(element.source(), fmt::format("{} in {}", show(element), key.name), describe_expected(key));
      }
      sizes.push_back(read_size(element_key, element).bytes);
    }
    if (auto problem = check_value(key, parameter_value{sizes})) {
      auto const& where = problem->element < array->size() ? (*array)[problem->element].source() : node.source();
      fail(where, fmt::format("{} in {}", problem->found, key.name), std::move(problem->expected));
    }
    return sizes;
  }

  std::string source_name_;
};

/// toml++ says "Error while parsing <context>: expected X, saw Y" or "...: <problem>"; this becomes
/// "found TOML syntax error while parsing <context>: Y, expected X", or keeps the problem whole.
config_error syntax_error(toml::parse_error const& error, std::string const& source_name)
{
  auto const location = source_location{
    .file = source_name, .line = error.source().begin.line, .column = error.source().begin.column, .variable = {}};
  std::string description{error.description()};
  std::string context;
  static std::regex const while_parsing{R"(^Error while parsing ([^:]*): (.*)$)"};
  static std::regex const expected_saw{R"(^\s*expected (.*), saw (.*)$)"};
  std::smatch match;
  if (std::regex_match(description, match, while_parsing)) {
    context     = " while parsing " + match[1].str();
    description = match[2].str();
  }
  if (std::regex_match(description, match, expected_saw)) {
    return config_error{location, "TOML syntax error" + context + ": " + match[2].str(), match[1].str()};
  }
  return config_error{location, "TOML syntax error" + context + ": " + description,
                      "valid TOML (https://toml.io/en/v1.0.0)"};
}

}  // namespace

stack_description read_toml(std::string_view text, std::string const& source_name)
{
  toml::table document;
  try {
    document = toml::parse(text, source_name);
  } catch (toml::parse_error const& error) {
    throw syntax_error(error, source_name);
  }
  return reader{source_name}.read(document);
}

}  // namespace rmm::config::detail
