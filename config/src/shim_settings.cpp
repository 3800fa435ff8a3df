// SPDX-License-Identifier: Apache-2.0
// The [shim] table: its schema, generated from RMM_CONFIG_SHIM_KEYS, and its typed reading.

#include <rmm/config/boolean.hpp>
#include <rmm/config/schema.hpp>
#include <rmm/config/shim_settings.hpp>

#include <rmm/environment_variables.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace rmm::config {

namespace {

/// What the reference says of a [shim] key; its name, type and default are in RMM_CONFIG_SHIM_KEYS.
struct shim_key_text {
  shim_key key;                     ///< the key, so that the table's order is checked
  value_kind kind;                  ///< the form of its value
  std::string_view description;     ///< one sentence for the reference and `--check`
  std::string_view when_unset{};    ///< what no value means, for a key without default
  std::int64_t minimum{0};          ///< an integer's smallest value
  std::int64_t maximum{INT64_MAX};  ///< an integer's largest value
};

constexpr std::array<shim_key_text, shim_key_count> shim_key_texts{{
  {shim_key::enabled, value_kind::boolean, "false turns the shim into a pure pass-through to CUDA (kill switch)"},
  {shim_key::verbose, value_kind::boolean,
   "print the resolved stack to stderr at start, and at exit how the program found each wrapper and the report"},
  {shim_key::stats_at_exit, value_kind::boolean,
   "print the report (allocations served, peaks, pass-throughs) to stderr when the program exits"},
  {shim_key::report_file, value_kind::file_name_pattern, "write the report as JSON to this file when the program exits",
   "no report file"},
  {shim_key::log_file, value_kind::file_name_pattern, "log every allocation and free of every device to this CSV file",
   "no log"},
  {shim_key::free_policy, value_kind::choice,
   "when memory freed with cudaFree/cuMemFree is reused: \"device_wide\" once all work submitted before the free "
   "completed, \"stream_ordered\" at once in the legacy default stream's order"},
  {shim_key::watch_streams, value_kind::boolean,
   "see the work submitted to non-blocking streams, so that a free costs nothing for a stream idle since it was "
   "last asked; false asks every one at each epoch"},
  {shim_key::control, value_kind::boolean,
   "answer rmm-ctl (report, release, pause, resume) on a socket only this user can open"},
  {shim_key::pause_timeout,
   value_kind::integer,
   "seconds an allocation made while the process is paused waits for the resume before it fails with out of "
   "memory; 0 fails it at once",
   {},
   0,
   31'536'000},
  {shim_key::pause_device_wait,
   value_kind::integer,
   "seconds a pause waits for the device work submitted before it (a stream held by a host function or a kernel "
   "that does not end never finishes); past that it gives up and nothing is paused; a resume gives it up at once",
   {},
   1,
   31'536'000},
  {shim_key::pause_keeps_host_memory, value_kind::boolean,
   "after a resume, hold the host memory the contents were copied into, so that the next pause copies into pages "
   "already in use (several times faster than into new ones) at the price of that memory held while the program "
   "runs; by default it is given back lazily instead (the system takes the pages when it runs short); rmm-ctl "
   "release gives it back either way"},
  {shim_key::physical_cache, value_kind::boolean,
   "keep the physical allocations the program releases (cuMemRelease) and hand them out again for its next "
   "cuMemCreate of the same size and properties; one it exported or bound elsewhere is never reused"},
}};

static_assert(
  [] {
    for (std::size_t i = 0; i < shim_key_texts.size(); ++i) {
      if (static_cast<std::size_t>(shim_key_texts[i].key) != i) { return false; }
    }
    return true;
  }(),
  "shim_key_texts describes every [shim] key of RMM_CONFIG_SHIM_KEYS, in its order");

/// The C++ type of a choice: an enumeration, its names given by names_of.
template <class T>
concept choice_type = std::is_enum_v<T>;

/// The names of an enumeration's values, as the file spells them (one overload per choice type).
constexpr std::span<std::string_view const> names_of(free_policy) noexcept { return free_policy_names; }

/// Whether a key's C++ type holds what its kind of value says.
template <class T>
constexpr bool kind_fits(value_kind kind) noexcept
{
  if constexpr (std::is_same_v<T, bool>) {
    return kind == value_kind::boolean;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return kind == value_kind::integer;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return kind == value_kind::file_name_pattern;
  } else if constexpr (choice_type<T>) {
    return kind == value_kind::choice;
  } else {
    return false;
  }
}

#define RMM_CONFIG_SHIM_KEY_CHECK(KEY_NAME, KEY_TYPE, KEY_DEFAULT)                                      \
  static_assert(kind_fits<KEY_TYPE>(shim_key_texts[static_cast<std::size_t>(shim_key::KEY_NAME)].kind), \
                "the kind of [shim] " #KEY_NAME " in shim_key_texts does not fit its type in RMM_CONFIG_SHIM_KEYS");
RMM_CONFIG_SHIM_KEYS(RMM_CONFIG_SHIM_KEY_CHECK)
#undef RMM_CONFIG_SHIM_KEY_CHECK

/// Whether `variable` is the RMM_SHIM_<KEY> override of `key`: core's table names the kill switch,
/// which must stay the override of `enabled`.
constexpr bool is_shim_override(std::string_view variable, std::string_view key) noexcept
{
  constexpr std::string_view prefix = "RMM_SHIM_";
  if (!variable.starts_with(prefix) || variable.size() != prefix.size() + key.size()) { return false; }
  for (std::size_t i = 0; i < key.size(); ++i) {
    auto const c     = key[i];
    auto const upper = c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    if (variable[prefix.size() + i] != upper) { return false; }
  }
  return true;
}
static_assert(is_shim_override(rmm::name_of(rmm::env_var::shim_enabled), name_of(shim_key::enabled)),
              "RMM_SHIM_ENABLED of core's table is the override of [shim] enabled");

// A typed value as the schema holds it, and back.
parameter_value to_parameter(bool value) { return value; }
parameter_value to_parameter(std::int64_t value) { return value; }
parameter_value to_parameter(std::string const& value)
{
  return value.empty() ? parameter_value{} : parameter_value{value};
}
template <choice_type Enum>
parameter_value to_parameter(Enum value)
{
  return std::string{names_of(value)[static_cast<std::size_t>(value)]};
}

void read_into(parameter_value const& value, bool& out)
{
  if (auto const* typed = std::get_if<bool>(&value)) { out = *typed; }
}
void read_into(parameter_value const& value, std::int64_t& out)
{
  if (auto const* typed = std::get_if<std::int64_t>(&value)) { out = *typed; }
}
void read_into(parameter_value const& value, std::string& out)
{
  if (auto const* typed = std::get_if<std::string>(&value)) { out = *typed; }
}
template <choice_type Enum>
void read_into(parameter_value const& value, Enum& out)
{
  auto const* name = std::get_if<std::string>(&value);
  if (name == nullptr) { return; }
  auto const names = names_of(out);
  auto const found = std::find(names.begin(), names.end(), *name);
  if (found != names.end()) { out = static_cast<Enum>(found - names.begin()); }
}

template <class T>
std::vector<std::string_view> choices_of()
{
  if constexpr (choice_type<T>) {
    auto const names = names_of(T{});
    return {names.begin(), names.end()};
  } else {
    return {};
  }
}

}  // namespace

std::span<key_schema const> shim_schema()
{
  // Read by the preload shim (docs/shim.md); each key has its RMM_SHIM_<KEY> twin.
  static std::vector<key_schema> const keys = [] {
    shim_values const defaults{};
    std::vector<key_schema> all;
#define RMM_CONFIG_SHIM_KEY_SCHEMA(KEY_NAME, KEY_TYPE, KEY_DEFAULT)                  \
  {                                                                                  \
    auto const& text = shim_key_texts[static_cast<std::size_t>(shim_key::KEY_NAME)]; \
    all.push_back(key_schema{.name          = name_of(shim_key::KEY_NAME),           \
                             .kind          = text.kind,                             \
                             .description   = text.description,                      \
                             .default_value = to_parameter(defaults.KEY_NAME),       \
                             .when_unset    = text.when_unset,                       \
                             .minimum       = text.minimum,                          \
                             .maximum       = text.maximum,                          \
                             .choices       = choices_of<KEY_TYPE>()});                    \
  }
    RMM_CONFIG_SHIM_KEYS(RMM_CONFIG_SHIM_KEY_SCHEMA)
#undef RMM_CONFIG_SHIM_KEY_SCHEMA
    return all;
  }();
  return keys;
}

parameter const& shim_setting(stack_description const& stack, shim_key key) { return stack.shim_setting(name_of(key)); }

shim_values read_shim_values(stack_description const& stack)
{
  auto const value_of = [&](shim_key key) -> parameter_value const* {
    auto const found =
      std::find_if(stack.shim.begin(), stack.shim.end(), [&](parameter const& p) { return p.key == name_of(key); });
    return found == stack.shim.end() ? nullptr : &found->value;
  };
  shim_values values{};
#define RMM_CONFIG_SHIM_KEY_READ(KEY_NAME, KEY_TYPE, KEY_DEFAULT) \
  if (auto const* value = value_of(shim_key::KEY_NAME)) { read_into(*value, values.KEY_NAME); }
  RMM_CONFIG_SHIM_KEYS(RMM_CONFIG_SHIM_KEY_READ)
#undef RMM_CONFIG_SHIM_KEY_READ
  return values;
}

bool shim_switched_off() noexcept
{
  auto const value = rmm::environment_value(rmm::env_var::shim_enabled);
  return value && parse_boolean(*value) == false;
}

}  // namespace rmm::config
