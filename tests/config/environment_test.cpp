// SPDX-License-Identifier: Apache-2.0
// Environment overrides: RMM_<TYPE>_<KEY> beats the file, which beats the built-in default.

#include "config_test_helpers.hpp"

#include <rmm/config/boolean.hpp>
#include <rmm/environment_variables.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using namespace rmm::config;
using rmm::config::test::example;
using rmm::config::test::scoped_variable;
using rmm::config::test::size_of;

constexpr std::uint64_t GiB = std::uint64_t{1} << 30;

config_error environment_error(std::string_view toml, environment const& env)
{
  auto error = rmm::config::test::load_error(toml, env);
  EXPECT_EQ(std::string{error.what()}.find('\n'), std::string::npos);
  return error;
}

constexpr std::string_view pool_over_cuda =
  "[[resource]]\ntype = \"pool\"\ninitial_size = \"1GiB\"\n[[resource]]\ntype = \"cuda\"\n";

TEST(ConfigEnvironment, VariableNames)
{
  EXPECT_EQ(override_variable("pool", "initial_size"), "RMM_POOL_INITIAL_SIZE");
  EXPECT_EQ(override_variable("cuda_async", "release_threshold"), "RMM_CUDA_ASYNC_RELEASE_THRESHOLD");
  EXPECT_EQ(override_variable("shim", "stats_at_exit"), "RMM_SHIM_STATS_AT_EXIT");
}

TEST(ConfigEnvironment, OverridesBeatTheFile)
{
  environment env{{{"RMM_POOL_INITIAL_SIZE", "2GiB"}, {"RMM_POOL_MAXIMUM_SIZE", "95%"}}};
  auto const stack    = load_file(example("pool.toml"), env);
  auto const& initial = stack.layers[0].at("initial_size");
  EXPECT_EQ(size_of(initial).bytes, 2 * GiB);
  EXPECT_EQ(initial.origin, value_origin::environment);
  EXPECT_EQ(initial.location.variable, "RMM_POOL_INITIAL_SIZE");
  EXPECT_EQ(initial.location.to_string(), "environment variable RMM_POOL_INITIAL_SIZE");
  EXPECT_DOUBLE_EQ(size_of(stack.layers[0].at("maximum_size")).percent, 95.0);
}

TEST(ConfigEnvironment, OverridesTheBuiltInStackWithoutAFile)
{
  environment env{{{"RMM_POOL_INITIAL_SIZE", "1GiB"}, {"RMM_POOL_MAXIMUM_SIZE", "8GiB"}}};
  auto const stack = load_from_environment(env);
  EXPECT_EQ(stack.stack_origin, value_origin::built_in);
  EXPECT_EQ(size_of(stack.layers[0].at("initial_size")).bytes, 1 * GiB);
  EXPECT_EQ(size_of(stack.layers[0].at("maximum_size")).bytes, 8 * GiB);
  EXPECT_EQ(stack.layers[0].at("maximum_size").origin, value_origin::environment);
}

TEST(ConfigEnvironment, AppliesToTheTopmostLayerOfTheType)
{
  environment env{{{"RMM_POOL_INITIAL_SIZE", "3GiB"}}};
  auto const stack = load_string(
    "resource = [{type = \"pool\", initial_size = \"1GiB\"}, {type = \"pool\", initial_size = \"4GiB\"}, {type = "
    "\"cuda\"}]\n",
    "two.toml", env);
  EXPECT_EQ(size_of(stack.layers[0].at("initial_size")).bytes, 3 * GiB);
  EXPECT_EQ(size_of(stack.layers[1].at("initial_size")).bytes, 4 * GiB);
  EXPECT_EQ(stack.layers[1].at("initial_size").origin, value_origin::file);
}

TEST(ConfigEnvironment, EveryKindOfValue)
{
  environment env{{{"RMM_SHIM_VERBOSE", "1"},
                   {"RMM_SHIM_ENABLED", "false"},
                   {"RMM_BINNING_BINS", "256, 1000,4KiB"},
                   {"RMM_FIXED_SIZE_BLOCKS_TO_PREALLOCATE", "7"},
                   {"RMM_CUDA_ASYNC_EXPORT_HANDLE_TYPE", "fabric"},
                   {"RMM_LOGGING_FILE", "/tmp/x-%p.csv"}}};
  auto const stack = load_string(
    "resource = [{type = \"logging\"}, {type = \"binning\"}, {type = \"fixed_size\"}, {type = \"cuda_async\"}]\n",
    "kinds.toml", env);
  EXPECT_TRUE(std::get<bool>(stack.shim_setting("verbose").value));
  EXPECT_FALSE(std::get<bool>(stack.shim_setting("enabled").value));
  EXPECT_EQ(std::get<std::vector<std::uint64_t>>(stack.layers[1].at("bins").value),
            (std::vector<std::uint64_t>{256, 1000, 4096}));
  EXPECT_EQ(std::get<std::int64_t>(stack.layers[2].at("blocks_to_preallocate").value), 7);
  EXPECT_EQ(std::get<std::string>(stack.layers[3].at("export_handle_type").value), "fabric");
  // A required key may come from the environment alone.
  EXPECT_EQ(std::get<std::string>(stack.layers[0].at("file").value), "/tmp/x-%p.csv");
}

TEST(ConfigEnvironment, OtherRmmVariablesAreNotOverrides)
{
  environment env{{{"RMM_LOG_FILE", "x.csv"},
                   {"RMM_DEBUG_LOG_FILE", "d.log"},
                   {"RMM_DEBUG_LOG_LEVEL", "TRACE"},
                   {"RMM_EMU_DEVICE_MEMORY", "1GiB"},
                   {"RMM_EXPECTED_BACKEND", "emulator"},
                   {"RMM_LOGGING_LEVEL", "INFO"},
                   {"RMM_SHIM_RUN_START", "1764781200000000000"},  // the shim's own, inherited by children
                   {"RMM_SOMETHING_ELSE", "1"},
                   {"PATH", "/usr/bin"}}};
  auto const stack = load_string(pool_over_cuda, "test.toml", env);
  EXPECT_EQ(stack.layers[0].at("initial_size").origin, value_origin::file);
}

TEST(ConfigEnvironment, UnparsableValueNamesTheVariable)
{
  auto const error = environment_error(pool_over_cuda, environment{{{"RMM_POOL_INITIAL_SIZE", "lots"}}});
  EXPECT_EQ(std::string{error.what()},
            "environment variable RMM_POOL_INITIAL_SIZE: found \"lots\", expected a size: bytes as an integer, or a "
            "string like \"512MiB\" or \"8GiB\" (units B, KiB, MiB, GiB, TiB), or a percentage of free device memory "
            "like \"50%\"");
  EXPECT_EQ(environment_error(pool_over_cuda, environment{{{"RMM_POOL_MAXIMUM_SIZE", "0"}}}).expected(),
            "a size above 0 bytes");
  EXPECT_EQ(environment_error(pool_over_cuda, environment{{{"RMM_POOL_MAXIMUM_SIZE", "101%"}}}).location().variable,
            "RMM_POOL_MAXIMUM_SIZE");
  EXPECT_EQ(environment_error(pool_over_cuda, environment{{{"RMM_SHIM_VERBOSE", "maybe"}}}).expected(),
            "true or false (also 1/0, yes/no, on/off)");
  EXPECT_EQ(environment_error(pool_over_cuda, environment{{{"RMM_POOL_INITIAL_SIZE", ""}}}).found(), "\"\"");
}

TEST(ConfigEnvironment, BooleansAndChoicesAreReadAsPeopleWriteThem)
{
  for (auto const* yes : {"true", "1", "yes", "on", "ON", " True "}) {
    auto const stack = load_from_environment(environment{{{"RMM_SHIM_VERBOSE", yes}}});
    EXPECT_TRUE(std::get<bool>(stack.shim_setting("verbose").value)) << yes;
  }
  for (auto const* no : {"false", "0", "no", "off", "Off", "FALSE\n"}) {
    auto const stack = load_from_environment(environment{{{"RMM_SHIM_ENABLED", no}}});
    EXPECT_FALSE(std::get<bool>(stack.shim_setting("enabled").value)) << no;
  }
  // Whitespace around a choice is trimmed, as around booleans and sizes.
  auto const stack = load_from_environment(environment{{{"RMM_SHIM_FREE_POLICY", " stream_ordered\t"}}});
  EXPECT_EQ(std::get<std::string>(stack.shim_setting("free_policy").value), "stream_ordered");
  EXPECT_EQ(parse_boolean("nope"), std::nullopt);
  EXPECT_EQ(parse_boolean(""), std::nullopt);
}

TEST(ConfigEnvironment, AnUnknownDebugLogLevelIsRefused)
{
  auto const error = environment_error(pool_over_cuda, environment{{{"RMM_DEBUG_LOG_LEVEL", "garbage"}}});
  EXPECT_EQ(error.location().variable, "RMM_DEBUG_LOG_LEVEL");
  EXPECT_EQ(error.found(), "\"garbage\"");
  EXPECT_EQ(error.expected(), "one of trace, debug, info, warn, error, critical, off");
  EXPECT_NO_THROW((void)load_from_environment(environment{{{"RMM_DEBUG_LOG_LEVEL", "Warn"}}}));
  EXPECT_NO_THROW((void)load_from_environment(environment{{{"RMM_DEBUG_LOG_LEVEL", ""}}}));
}

TEST(ConfigEnvironment, MaximumBelowInitialAcrossSources)
{
  // The file sets 1 GiB initial; the environment's maximum is compared with it and blamed.
  auto const error = environment_error(pool_over_cuda, environment{{{"RMM_POOL_MAXIMUM_SIZE", "512MiB"}}});
  EXPECT_EQ(error.location().variable, "RMM_POOL_MAXIMUM_SIZE");
  EXPECT_NE(error.found().find("below initial_size = \"1GiB\" (test.toml:3:16)"), std::string::npos) << error.what();
}

TEST(ConfigEnvironment, ListItemsAreCheckedInOrder)
{
  auto const error = environment_error("resource = [{type = \"binning\", bins = [256]}, {type = \"cuda\"}]\n",
                                       environment{{{"RMM_BINNING_BINS", "4KiB,1KiB"}}});
  EXPECT_NE(error.found().find("\"1KiB\" after \"4KiB\" (item 2 of \"4KiB,1KiB\")"), std::string::npos) << error.what();
  EXPECT_NE(error.expected().find("ascending"), std::string::npos);
}

TEST(ConfigEnvironment, UnknownKeyUnderAKnownType)
{
  auto const error = environment_error(pool_over_cuda, environment{{{"RMM_POOL_INITAL_SIZE", "1GiB"}}});
  EXPECT_EQ(error.found(), "the unknown setting RMM_POOL_INITAL_SIZE");
  EXPECT_NE(error.expected().find("did you mean RMM_POOL_INITIAL_SIZE?"), std::string::npos) << error.what();
  EXPECT_NE(environment_error(pool_over_cuda, environment{{{"RMM_CUDA_SIZE", "1"}}}).found().find("has no settings"),
            std::string::npos);
  EXPECT_NE(environment_error(pool_over_cuda, environment{{{"RMM_CALLBACK_X", "1"}}}).expected().find("built in code"),
            std::string::npos);
}

TEST(ConfigEnvironment, MisspeltTypeIsAnError)
{
  auto const error = environment_error(pool_over_cuda, environment{{{"RMM_POLL_INITIAL_SIZE", "1GiB"}}});
  EXPECT_NE(error.expected().find("did you mean RMM_POOL_INITIAL_SIZE?"), std::string::npos) << error.what();
  EXPECT_NE(environment_error(pool_over_cuda, environment{{{"RMM_CONFG", "x.toml"}}}).expected().find("RMM_CONFIG"),
            std::string::npos);
}

TEST(ConfigEnvironment, TypeAbsentFromTheStackIsAnError)
{
  auto const error = environment_error(pool_over_cuda, environment{{{"RMM_LIMITING_LIMIT", "1GiB"}}});
  EXPECT_EQ(error.found(), "an override for a \"limiting\" layer, but test.toml has none");
  EXPECT_EQ(error.expected(), "a stack with a \"limiting\" layer, or RMM_LIMITING_LIMIT unset");
  auto const built_in = load_from_environment(environment{{{"RMM_SHIM_VERBOSE", "true"}}});
  EXPECT_TRUE(std::get<bool>(built_in.shim_setting("verbose").value));
  try {
    (void)load_from_environment(environment{{{"RMM_ARENA_ARENA_SIZE", "1GiB"}}});
    FAIL() << "an override for a layer the built-in stack lacks was accepted";
  } catch (config_error const& e) {
    EXPECT_NE(e.found().find("the built-in stack has none"), std::string::npos) << e.what();
  }
}

TEST(ConfigEnvironment, EmptyRmmConfig)
{
  try {
    (void)load_from_environment(environment{{{"RMM_CONFIG", ""}}});
    FAIL() << "an empty RMM_CONFIG was accepted";
  } catch (config_error const& e) {
    EXPECT_EQ(e.location().variable, "RMM_CONFIG");
  }
}

TEST(ConfigEnvironment, OneTableHasEveryVariableAndTheReferencePrintsIt)
{
  auto const table = rmm::config::environment_variables();
  auto const has   = [&](std::string const& name) {
    return std::any_of(table.begin(), table.end(), [&](auto const& v) { return v.name == name; });
  };
  for (auto const* name : {"RMM_CONFIG", "RMM_LOG_FILE", "RMM_DEBUG_LOG_FILE", "RMM_DEBUG_LOG_LEVEL",
                           "RMM_POOL_INITIAL_SIZE", "RMM_CUDA_ASYNC_RELEASE_THRESHOLD", "RMM_SHIM_FREE_POLICY",
                           "RMM_SHIM_ENABLED", "RMM_LOGGING_FILE", "RMM_SHIM_RUN_START"}) {
    EXPECT_TRUE(has(name)) << name;
  }
  for (auto const& v : table) {
    EXPECT_EQ(rmm::config::is_reserved_variable(v.name), !v.is_override) << v.name;
    EXPECT_FALSE(v.meaning.empty()) << v.name;
    EXPECT_EQ(v.meaning.find('|'), std::string::npos) << v.name << " would break the Markdown table";
  }
  // The test harness's variables are not rmm's.
  EXPECT_FALSE(has("RMM_EXPECTED_BACKEND"));
  EXPECT_FALSE(rmm::config::is_reserved_variable("RMM_EMU_DEVICE_MEMORY"));

  std::ifstream file{RMM_CONFIGURATION_DOC};
  std::string const doc{std::istreambuf_iterator<char>{file}, std::istreambuf_iterator<char>{}};
  auto const expected = rmm::config::environment_table_markdown();
  EXPECT_NE(doc.find(expected), std::string::npos)
    << "docs/configuration.md must print the table of environment variables as the code has it:\n"
    << expected;
}

TEST(ConfigReference, EveryKeyOfTheSchemaHasItsRowAndEveryRowItsKey)
{
  std::ifstream file{RMM_CONFIGURATION_DOC};
  std::vector<std::string> rows;
  for (std::string line; std::getline(file, line);) {
    if (line.starts_with("| `")) { rows.push_back(line); }
  }
  ASSERT_FALSE(rows.empty());
  // A key's row names it ("pool.initial_size", or "initial_size" in a table of one type or of
  // [shim]) in its first cell and its environment variable in another.
  auto const documented = [&](std::string const& first_cell, std::string const& variable) {
    return std::any_of(rows.begin(), rows.end(), [&](std::string const& row) {
      return row.starts_with("| `" + first_cell + "` |") && row.find("| `" + variable + "` |") != std::string::npos;
    });
  };
  std::vector<std::string> key_cells;
  for (auto const& key : rmm::config::shim_schema()) {
    EXPECT_TRUE(documented(std::string{key.name}, override_variable("shim", key.name))) << "[shim] " << key.name;
    key_cells.emplace_back(key.name);
  }
  for (auto const& schema : rmm::config::layer_schemas()) {
    for (auto const& key : schema.keys) {
      auto const qualified = std::string{schema.type} + "." + std::string{key.name};
      auto const variable  = override_variable(schema.type, key.name);
      EXPECT_TRUE(documented(qualified, variable) || documented(std::string{key.name}, variable))
        << qualified << " has no row in docs/configuration.md";
      key_cells.push_back(qualified);
      key_cells.emplace_back(key.name);
    }
  }
  // The other way: a row with an override variable belongs to a key the schema has (the table of
  // environment variables names the variable itself in its first cell).
  for (auto const& row : rows) {
    if (row.find("| `RMM_") == std::string::npos || row.starts_with("| `RMM_")) { continue; }
    auto const cell = row.substr(3, row.find('`', 3) - 3);
    EXPECT_NE(std::find(key_cells.begin(), key_cells.end(), cell), key_cells.end())
      << "docs/configuration.md documents `" << cell << "`, which the schema does not have";
  }
}

TEST(EnvironmentTable, CoreNamesEveryVariableItReadsOnce)
{
  for (std::size_t i = 0; i < rmm::env_vars.size(); ++i) {
    auto const& row = rmm::env_vars[i];
    EXPECT_EQ(static_cast<std::size_t>(row.id), i);
    EXPECT_TRUE(row.name.starts_with("RMM_")) << row.name;
    EXPECT_FALSE(row.meaning.empty()) << row.name;
  }
  EXPECT_EQ(rmm::name_of(rmm::env_var::config), config_file_variable);
  EXPECT_EQ(rmm::name_of(rmm::env_var::log_file), "RMM_LOG_FILE");
  EXPECT_EQ(rmm::name_of(rmm::env_var::debug_log_level), "RMM_DEBUG_LOG_LEVEL");
  // The kill switch is also the override of [shim] enabled: one variable, one row in the reference.
  EXPECT_EQ(rmm::name_of(rmm::env_var::shim_enabled), override_variable("shim", "enabled"));
  auto const table = environment_variables();
  for (auto const& row : rmm::env_vars) {
    auto const rows = std::count_if(table.begin(), table.end(), [&](auto const& v) { return v.name == row.name; });
    EXPECT_EQ(rows, 1) << row.name;
  }

  scoped_variable const set{"RMM_LOG_FILE", "/tmp/adaptor.csv"};
  EXPECT_EQ(rmm::environment_value(rmm::env_var::log_file), std::optional<std::string_view>{"/tmp/adaptor.csv"});
  scoped_variable const unset{"RMM_DEBUG_LOG_FILE", std::nullopt};
  EXPECT_EQ(rmm::environment_value(rmm::env_var::debug_log_file), std::nullopt);
}

TEST(EnvironmentTable, TheVariableTheShimSetsForItsChildrenIsNoOverride)
{
  // A process the program starts under the shim inherits RMM_SHIM_RUN_START; its shim must not
  // take it for a misspelt [shim] key and refuse to start.
  EXPECT_TRUE(is_reserved_variable("RMM_SHIM_RUN_START"));
  EXPECT_NO_THROW((void)load_from_environment(environment{{{"RMM_SHIM_RUN_START", "1700000000000000000"}}}));
  EXPECT_FALSE(is_reserved_variable("RMM_SHIM_ENABLED")) << "an override, applied to [shim] enabled";
}

}  // namespace
