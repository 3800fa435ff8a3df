// SPDX-License-Identifier: Apache-2.0
// The [shim] keys as the shim reads them (typed, from one list), and the one boolean reader the
// kill switch shares with every other yes-or-no value.

#include "config_test_helpers.hpp"

#include <rmm/config/boolean.hpp>
#include <rmm/config/shim_settings.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <variant>

namespace {

using namespace rmm::config;
using rmm::config::test::scoped_variable;

TEST(ShimSettings, TheSchemaIsTheListOfKeysInItsOrder)
{
  auto const schema = shim_schema();
  ASSERT_EQ(schema.size(), shim_key_count);
  for (std::size_t i = 0; i < shim_key_count; ++i) {
    EXPECT_EQ(schema[i].name, name_of(static_cast<shim_key>(i)));
    EXPECT_FALSE(schema[i].description.empty()) << schema[i].name;
  }
  EXPECT_EQ(name_of(shim_key::stats_at_exit), "stats_at_exit");
  EXPECT_EQ(schema[static_cast<std::size_t>(shim_key::free_policy)].choices,
            (std::vector<std::string_view>{"device_wide", "stream_ordered"}));
}

TEST(ShimSettings, TheDefaultsAreWrittenOnce)
{
  // The schema's defaults are a default-constructed shim_values, and a stack left at its defaults
  // reads back as one.
  auto const schema = shim_schema();
  auto const at     = [&](shim_key key) { return schema[static_cast<std::size_t>(key)].default_value; };
  EXPECT_EQ(at(shim_key::enabled), parameter_value{true});
  EXPECT_EQ(at(shim_key::verbose), parameter_value{false});
  EXPECT_EQ(at(shim_key::stats_at_exit), parameter_value{false});
  EXPECT_EQ(at(shim_key::report_file), parameter_value{}) << "no default: unset means no report file";
  EXPECT_EQ(schema[static_cast<std::size_t>(shim_key::report_file)].when_unset, "no report file");
  EXPECT_EQ(at(shim_key::log_file), parameter_value{});
  EXPECT_EQ(at(shim_key::free_policy), parameter_value{std::string{"device_wide"}});

  auto const values = read_shim_values(load_from_environment(environment{}));
  shim_values const defaults{};
  EXPECT_EQ(values.enabled, defaults.enabled);
  EXPECT_TRUE(values.enabled);
  EXPECT_FALSE(values.verbose);
  EXPECT_FALSE(values.stats_at_exit);
  EXPECT_EQ(values.report_file, "");
  EXPECT_EQ(values.log_file, "");
  EXPECT_EQ(values.free_policy, free_policy::device_wide);
}

TEST(ShimSettings, ReadTypedFromTheFileAndTheEnvironment)
{
  environment env{{{"RMM_SHIM_VERBOSE", "on"},
                   {"RMM_SHIM_FREE_POLICY", "stream_ordered"},
                   {"RMM_SHIM_LOG_FILE", "/tmp/shim-%p.csv"}}};
  auto const stack  = load_string("[shim]\nstats_at_exit = true\nreport_file = \"r.json\"\n", "shim.toml", env);
  auto const values = read_shim_values(stack);
  EXPECT_TRUE(values.enabled);
  EXPECT_TRUE(values.verbose);
  EXPECT_TRUE(values.stats_at_exit);
  EXPECT_EQ(values.report_file, "r.json");
  EXPECT_EQ(values.log_file, "/tmp/shim-%p.csv");
  EXPECT_EQ(values.free_policy, free_policy::stream_ordered);
  EXPECT_EQ(name_of(values.free_policy), "stream_ordered");
  EXPECT_EQ(shim_setting(stack, shim_key::verbose).origin, value_origin::environment);
  EXPECT_EQ(shim_setting(stack, shim_key::stats_at_exit).origin, value_origin::file);
  // A stack without [shim] parameters (built by hand) reads as the defaults.
  EXPECT_TRUE(read_shim_values(stack_description{}).enabled);
}

TEST(ShimSettings, OneBooleanReaderForEveryYesOrNo)
{
  for (auto const* yes : {"true", "TRUE", "1", "yes", "Yes", "on", "ON", " true\t"}) {
    EXPECT_EQ(parse_boolean(yes), std::optional{true}) << yes;
  }
  for (auto const* no : {"false", "False", "0", "no", "NO", "off", "Off", "off\n"}) {
    EXPECT_EQ(parse_boolean(no), std::optional{false}) << no;
  }
  for (auto const* neither : {"", "maybe", "2", "y", "n", "enable", "disabled", "tru", "o"}) {
    EXPECT_EQ(parse_boolean(neither), std::nullopt) << neither;
  }
  // The refusal lists every accepted word, for the file's overrides and the kill switch alike.
  auto const error =
    rmm::config::test::load_error("[[resource]]\ntype = \"cuda\"\n", environment{{{"RMM_SHIM_ENABLED", "maybe"}}});
  EXPECT_EQ(error.location().variable, "RMM_SHIM_ENABLED");
  EXPECT_EQ(error.expected(), "true or false (also 1/0, yes/no, on/off)");
}

TEST(ShimSettings, TheKillSwitchTakesEveryFalseWord)
{
  for (auto const* off : {"false", "0", "no", "off", "OFF", " No "}) {
    scoped_variable const set{"RMM_SHIM_ENABLED", off};
    EXPECT_TRUE(shim_switched_off()) << off;
  }
  for (auto const* not_off : {"true", "on", "1", "maybe", ""}) {
    scoped_variable const set{"RMM_SHIM_ENABLED", not_off};
    EXPECT_FALSE(shim_switched_off()) << not_off;
  }
  scoped_variable const unset{"RMM_SHIM_ENABLED", std::nullopt};
  EXPECT_FALSE(shim_switched_off());
}

}  // namespace
