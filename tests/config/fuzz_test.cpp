// SPDX-License-Identifier: Apache-2.0
// Random and mutated TOML, and random override values: the loader must never crash or hang, must
// refuse with a one-line positioned config_error, and must never accept an invalid stack.
// Deterministic: fixed seeds.

#include "config_test_helpers.hpp"

#include <rmm/config/schema.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace rmm::config;

std::string read_file(std::filesystem::path const& path)
{
  std::ifstream file{path};
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> seed_documents()
{
  std::vector<std::string> seeds;
  for (auto const* name : {"pool.toml", "binning_pool.toml", "logging_trace.toml", "memory_limit.toml"}) {
    seeds.push_back(read_file(rmm::config::test::example(name)));
  }
  seeds.emplace_back(default_stack_toml());
  seeds.emplace_back(R"(resource = [
  { type = "tracking", capture_stacks = true },
  { type = "aligned", alignment = 4096, alignment_threshold = "1MiB" },
  { type = "binning", bins = [256, 1000, "4KiB"] },
  { type = "fixed_size", block_size = "2MiB", blocks_to_preallocate = 4 },
  { type = "arena", arena_size = "1GiB", dump_log_on_failure = true },
  { type = "cuda_async", initial_pool_size = "1GiB", release_threshold = 0, export_handle_type = "fabric" },
]
[shim]
enabled = true
verbose = false
)");
  return seeds;
}

// Fragments that are likely to reach deep into the validation when spliced in.
std::vector<std::string> const fragments{"-1",
                                         "0",
                                         "1e9",
                                         "\"50%\"",
                                         "\"150%\"",
                                         "\"8GB\"",
                                         "\"1.5GiB\"",
                                         "true",
                                         "[1, 2]",
                                         "[]",
                                         "{}",
                                         "\"\"",
                                         "\"%z\"",
                                         "\"pool\"",
                                         "\"cuda\"",
                                         "\"callback\"",
                                         "[[resource]]",
                                         "[shim]",
                                         "type = ",
                                         "initial_size = ",
                                         "maximum_size = ",
                                         "bins = ",
                                         "\n",
                                         "=",
                                         "\"",
                                         "'",
                                         "#",
                                         "[",
                                         "]",
                                         "{",
                                         "}",
                                         ",",
                                         ".",
                                         "\\",
                                         "\"\"\"",
                                         "9223372036854775807",
                                         "-9223372036854775808",
                                         "99999999999999999999",
                                         "\"99999999999TiB\"",
                                         "nan",
                                         "inf",
                                         "1979-05-27",
                                         "\xff\xfe",
                                         std::string{"\0", 1}};

std::string mutate(std::string text, std::mt19937_64& random)
{
  auto const pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(random() % n); };
  auto const mutations = 1 + pick(4);
  for (std::size_t m = 0; m < mutations; ++m) {
    auto const at = pick(text.size() + 1);
    switch (pick(7)) {
      case 0:  // flip a byte
        if (!text.empty()) { text[pick(text.size())] ^= static_cast<char>(1 << pick(8)); }
        break;
      case 1: text.insert(at, 1, static_cast<char>(pick(128))); break;
      case 2: text.erase(at, pick(16)); break;
      case 3: text.insert(at, fragments[pick(fragments.size())]); break;
      case 4: text.resize(at); break;  // truncate
      case 5: {                        // duplicate a slice
        auto const length = pick(64);
        text.insert(pick(text.size() + 1), text.substr(at, length));
        break;
      }
      default: {  // replace a value after '='
        auto const equals = text.find('=', at);
        if (equals != std::string::npos) {
          auto const end = text.find('\n', equals);
          text.replace(equals + 1, end == std::string::npos ? std::string::npos : end - equals - 1,
                       " " + fragments[pick(fragments.size())]);
        }
        break;
      }
    }
  }
  return text;
}

/// An accepted stack must be one the builder can take: checked independently of the loader.
void expect_valid_stack(stack_description const& stack, std::string const& input)
{
  SCOPED_TRACE("accepted input:\n" + input);
  ASSERT_FALSE(stack.layers.empty());
  for (std::size_t i = 0; i < stack.layers.size(); ++i) {
    auto const& layer = stack.layers[i];
    ASSERT_NE(layer.schema, nullptr);
    ASSERT_NE(layer.schema->kind, layer_kind::code_only);
    EXPECT_EQ(layer.schema->needs_upstream(), i + 1 < stack.layers.size()) << layer.type();
    ASSERT_EQ(layer.parameters.size(), layer.schema->keys.size());
    for (std::size_t k = 0; k < layer.parameters.size(); ++k) {
      auto const& key     = layer.schema->keys[k];
      auto const& setting = layer.parameters[k];
      EXPECT_EQ(setting.key, key.name);
      if (!setting.is_set()) {
        EXPECT_FALSE(key.required) << key.name;
        continue;
      }
      switch (key.kind) {
        case value_kind::boolean: EXPECT_TRUE(std::holds_alternative<bool>(setting.value)); break;
        case value_kind::integer: {
          auto const value = std::get<std::int64_t>(setting.value);
          EXPECT_TRUE(value >= key.minimum && value <= key.maximum) << key.name << " = " << value;
          break;
        }
        case value_kind::size:
        case value_kind::size_or_percent: {
          auto const size = std::get<size_spec>(setting.value);
          if (size.is_percent) {
            EXPECT_EQ(key.kind, value_kind::size_or_percent);
            EXPECT_TRUE(size.percent > 0 && size.percent <= 100) << size.percent;
          } else {
            EXPECT_GE(size.bytes, static_cast<std::uint64_t>(key.minimum)) << key.name;
          }
          break;
        }
        case value_kind::size_list: {
          auto const& sizes = std::get<std::vector<std::uint64_t>>(setting.value);
          EXPECT_FALSE(sizes.empty());
          EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
          EXPECT_EQ(std::adjacent_find(sizes.begin(), sizes.end()), sizes.end());
          EXPECT_TRUE(sizes.empty() || sizes.front() > 0);
          break;
        }
        case value_kind::choice:
          EXPECT_NE(std::find(key.choices.begin(), key.choices.end(), std::get<std::string>(setting.value)),
                    key.choices.end());
          break;
        case value_kind::file_name_pattern:
          EXPECT_FALSE(file_name_pattern_problem(std::get<std::string>(setting.value)).has_value());
          break;
      }
    }
  }
  EXPECT_FALSE(describe(stack).empty());
}

void expect_positioned_error(config_error const& error, std::string const& input)
{
  std::string const what = error.what();
  SCOPED_TRACE("refused input:\n" + input);
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  EXPECT_NE(what.find(": found "), std::string::npos) << what;
  EXPECT_NE(what.find(", expected "), std::string::npos) << what;
  if (error.location().in_source()) {
    EXPECT_EQ(what.rfind("fuzz.toml:", 0), 0U) << what;
  } else {
    // Only whole-document problems have no line: an empty resource list.
    EXPECT_EQ(error.location().file, "fuzz.toml") << what;
  }
}

struct outcome_counts {
  std::size_t accepted{0};
  std::size_t refused{0};
};

void feed(std::string const& input, outcome_counts& counts)
{
  try {
    auto const stack = load_string(input, "fuzz.toml", environment{});
    ++counts.accepted;
    expect_valid_stack(stack, input);
  } catch (config_error const& error) {
    ++counts.refused;
    expect_positioned_error(error, input);
  } catch (std::exception const& other) {
    ADD_FAILURE() << "not a config_error: " << other.what() << "\ninput:\n" << input;
  }
}

TEST(ConfigFuzz, MutatedDocuments)
{
  auto const start = std::chrono::steady_clock::now();
  auto const seeds = seed_documents();
  std::mt19937_64 random{20240611};
  outcome_counts counts;
  for (int i = 0; i < 20000 && !HasFailure(); ++i) {
    feed(mutate(seeds[static_cast<std::size_t>(i) % seeds.size()], random), counts);
  }
  // Both outcomes must occur, or the mutations are not reaching the validation.
  EXPECT_GT(counts.accepted, 100U);
  EXPECT_GT(counts.refused, 10000U);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds{15});
}

TEST(ConfigFuzz, RandomBytesAndTokens)
{
  auto const start = std::chrono::steady_clock::now();
  std::mt19937_64 random{7};
  outcome_counts counts;
  for (int i = 0; i < 5000 && !HasFailure(); ++i) {
    std::string input;
    auto const length = random() % 200;
    if (i % 2 == 0) {
      for (std::size_t c = 0; c < length; ++c) { input += static_cast<char>(random() % 256); }
    } else {
      for (std::size_t c = 0; c < length / 4; ++c) { input += fragments[random() % fragments.size()] + " "; }
    }
    feed(input, counts);
  }
  EXPECT_GT(counts.refused, 4000U);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds{5});
}

TEST(ConfigFuzz, RandomOverrideValues)
{
  std::mt19937_64 random{11};
  auto const document = read_file(rmm::config::test::example("binning_pool.toml"));
  std::vector<std::string> const variables{"RMM_POOL_INITIAL_SIZE", "RMM_POOL_MAXIMUM_SIZE", "RMM_BINNING_BINS",
                                           "RMM_BINNING_MIN_SIZE_EXPONENT", "RMM_SHIM_VERBOSE"};
  std::string const alphabet = "0123456789%.,-+ KMGTiBb\"x\n";
  for (int i = 0; i < 5000 && !HasFailure(); ++i) {
    std::string value;
    for (auto c = random() % 12; c > 0; --c) { value += alphabet[random() % alphabet.size()]; }
    environment env{{{variables[random() % variables.size()], value}}};
    try {
      expect_valid_stack(load_string(document, "fuzz.toml", env), document + "\nwith " + value);
    } catch (config_error const& error) {
      std::string const what = error.what();
      EXPECT_EQ(what.rfind("environment variable RMM_", 0), 0U) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    } catch (std::exception const& other) {
      ADD_FAILURE() << "not a config_error: " << other.what() << " for \"" << value << "\"";
    }
  }
}

}  // namespace
