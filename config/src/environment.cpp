// SPDX-License-Identifier: Apache-2.0
#include <rmm/config/environment.hpp>
#include <rmm/config/schema.hpp>

#include "values.hpp"

#include <rmm/environment_variables.hpp>
#include <rmm/logger.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

extern char** environ;  // NOLINT: POSIX

namespace rmm::config {

namespace {

std::string upper(std::string_view text)
{
  std::string result{text};
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return result;
}

constexpr std::string_view shim_type = "shim";

/// A type that overrides can name: a layer type with keys, or the shim.
struct override_target {
  std::string_view type;
  std::span<key_schema const> keys;
  layer_schema const* schema;  // null for the shim
};

std::vector<override_target> override_targets()
{
  std::vector<override_target> targets{{shim_type, shim_schema(), nullptr}};
  for (auto const& schema : layer_schemas()) { targets.push_back({schema.type, schema.keys, &schema}); }
  // Longest name first, so RMM_CUDA_ASYNC_... is cuda_async, not cuda with key ASYNC_...
  std::sort(targets.begin(), targets.end(), [](auto const& a, auto const& b) { return a.type.size() > b.type.size(); });
  return targets;
}

std::vector<std::string> all_override_names()
{
  std::vector<std::string> names{std::string{config_file_variable}};
  for (auto const& target : override_targets()) {
    for (auto const& key : target.keys) { names.push_back(override_variable(target.type, key.name)); }
  }
  return names;
}

std::string list_names(std::vector<std::string> const& names)
{
  std::string list;
  for (auto const& name : names) { list += (list.empty() ? "" : ", ") + name; }
  return list;
}

std::vector<parameter>* settings_of(stack_description& stack, override_target const& target)
{
  if (target.schema == nullptr) { return &stack.shim; }
  auto const layer = std::find_if(stack.layers.begin(), stack.layers.end(), [&](layer_description const& l) {
    return l.schema == target.schema;
  });  // the topmost: layers are listed top first
  return layer == stack.layers.end() ? nullptr : &layer->parameters;
}

void apply_override(stack_description& stack,
                    override_target const& target,
                    std::string const& variable,
                    std::string_view key_part,
                    std::string const& value)
{
  auto const here = source_location{.file = {}, .line = 0, .column = 0, .variable = variable};
  std::vector<std::string> valid;
  for (auto const& key : target.keys) { valid.push_back(override_variable(target.type, key.name)); }
  auto const key = std::find_if(target.keys.begin(), target.keys.end(),
                                [&](key_schema const& k) { return upper(k.name) == key_part; });
  if (key == target.keys.end()) {
    if (target.schema != nullptr && target.schema->kind == layer_kind::code_only) {
      throw config_error{here, fmt::format("an override for \"{}\"", target.type),
                         fmt::format("no such variable: {}", target.schema->code_only_reason)};
    }
    if (valid.empty()) {
      throw config_error{here, fmt::format("an override for \"{}\", which has no settings", target.type),
                         "no RMM_" + upper(target.type) + "_* variable"};
    }
    std::vector<std::string_view> candidates(valid.begin(), valid.end());
    auto expected = "one of " + list_names(valid);
    if (auto const guess = closest_match(variable, candidates)) {
      expected += fmt::format(" (did you mean {}?)", *guess);
    }
    throw config_error{here, fmt::format("the unknown setting {}", variable), std::move(expected)};
  }

  auto* settings = settings_of(stack, target);
  if (settings == nullptr) {
    throw config_error{here,
                       fmt::format("an override for a \"{}\" layer, but {} has none", target.type,
                                   stack.source.empty() ? std::string{"the built-in stack"} : stack.source),
                       fmt::format("a stack with a \"{}\" layer, or {} unset", target.type, variable)};
  }
  auto parsed = detail::parse_value_text(*key, value);
  if (auto* problem = std::get_if<detail::value_problem>(&parsed)) {
    auto found = problem->found;
    if (problem->element != std::numeric_limits<std::size_t>::max()) {
      found += fmt::format(" (item {} of {})", problem->element + 1, detail::quoted(value));
    }
    throw config_error{here, std::move(found), std::move(problem->expected)};
  }
  auto& setting =
    *std::find_if(settings->begin(), settings->end(), [&](parameter const& p) { return p.key == key->name; });
  setting.value    = std::get<parameter_value>(std::move(parsed));
  setting.origin   = value_origin::environment;
  setting.location = here;
}

}  // namespace

environment::environment(std::map<std::string, std::string, std::less<>> variables) : variables_{std::move(variables)}
{
}

environment environment::from_process()
{
  environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view const text{*entry};
    auto const equals = text.find('=');
    if (equals == std::string_view::npos) { continue; }
    env.variables_.emplace(std::string{text.substr(0, equals)}, std::string{text.substr(equals + 1)});
  }
  return env;
}

std::optional<std::string> environment::get(std::string_view name) const
{
  auto const it = variables_.find(name);
  return it == variables_.end() ? std::nullopt : std::optional{it->second};
}

void environment::set(std::string name, std::string value) { variables_[std::move(name)] = std::move(value); }

std::string override_variable(std::string_view type, std::string_view key)
{
  return std::string{environment_prefix} + upper(type) + "_" + upper(key);
}

namespace {

/// The variables of core's table that are not overrides: other parts of rmm read them by name.
std::vector<environment_variable> other_variables()
{
  std::vector<environment_variable> others;
  for (auto const& v : rmm::env_vars) {
    if (v.use != rmm::env_var_use::override_read_early) {
      others.push_back({std::string{v.name}, "", std::string{v.meaning}, false});
    }
  }
  return others;
}

/// The debug log reads its level itself (core knows nothing of the configuration), and only warns
/// about a bad one there: refused here, so that rmm-run and the shim stop before the program starts.
void check_debug_log_level(std::string const& value)
{
  if (value.empty() || rmm::level_from_string(value)) { return; }
  throw config_error{
    source_location{
      .file = {}, .line = 0, .column = 0, .variable = std::string{rmm::name_of(rmm::env_var::debug_log_level)}},
    detail::quoted(value), "one of trace, debug, info, warn, error, critical, off"};
}

/// Core's meaning of `variable` when core's table has it as an override it reads early
/// (RMM_SHIM_ENABLED, the kill switch): it says what the schema's description cannot.
std::optional<std::string_view> early_meaning(std::string_view variable)
{
  for (auto const& v : rmm::env_vars) {
    if (v.use == rmm::env_var_use::override_read_early && v.name == variable) { return v.meaning; }
  }
  return std::nullopt;
}

}  // namespace

std::vector<environment_variable> environment_variables()
{
  auto table = other_variables();
  for (auto const& key : shim_schema()) {
    auto name          = override_variable(shim_type, key.name);
    auto const meaning = early_meaning(name).value_or(key.description);
    table.push_back({std::move(name), fmt::format("`{}` of `[shim]`", key.name), std::string{meaning}, true});
  }
  for (auto const& schema : layer_schemas()) {
    for (auto const& key : schema.keys) {
      table.push_back({override_variable(schema.type, key.name),
                       fmt::format("`{}` of the topmost `{}` layer", key.name, schema.type),
                       std::string{key.description}, true});
    }
  }
  return table;
}

std::string environment_table_markdown()
{
  std::string table = "| variable | in a configuration file | meaning |\n| --- | --- | --- |\n";
  for (auto const& v : environment_variables()) {
    table += fmt::format("| `{}` | {} | {} |\n", v.name, v.toml.empty() ? "-" : v.toml, v.meaning);
  }
  return table;
}

bool is_reserved_variable(std::string_view name) noexcept
{
  try {
    static auto const others = other_variables();
    return std::any_of(others.begin(), others.end(), [name](auto const& v) { return v.name == name; });
  } catch (...) {  // out of host memory building the table: nothing is reserved
    return false;
  }
}

void apply_environment_overrides(stack_description& stack, environment const& env)
{
  auto const targets = override_targets();
  for (auto const& [variable, value] : env.variables()) {
    if (variable == rmm::name_of(rmm::env_var::debug_log_level)) {
      check_debug_log_level(value);
      continue;
    }
    if (!variable.starts_with(environment_prefix) || variable == config_file_variable ||
        is_reserved_variable(variable)) {
      continue;
    }
    auto const name   = std::string_view{variable}.substr(environment_prefix.size());
    auto const target = std::find_if(targets.begin(), targets.end(), [&](override_target const& t) {
      auto const type = upper(t.type) + "_";
      return name.starts_with(type);
    });
    if (target != targets.end()) {
      apply_override(stack, *target, variable, name.substr(target->type.size() + 1), value);
      continue;
    }
    // Not ours, unless it is a near miss of one of ours (RMM_POLL_INITIAL_SIZE, RMM_CONFG):
    // silently ignoring a misspelt override would build a different stack than the user asked for.
    auto const names = all_override_names();
    std::vector<std::string_view> candidates(names.begin(), names.end());
    if (auto const guess = closest_match(variable, candidates)) {
      throw config_error{source_location{.file = {}, .line = 0, .column = 0, .variable = variable},
                         fmt::format("{}, which is not an rmm setting", variable),
                         fmt::format("a known variable (did you mean {}?)", *guess)};
    }
  }
}

}  // namespace rmm::config
