// SPDX-License-Identifier: Apache-2.0
// Valid configurations: the shipped examples, the built-in stack, defaults and value origins.

#include "config_test_helpers.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include <string>
#include <vector>

namespace {

using namespace rmm::config;
using rmm::config::test::example;
using rmm::config::test::size_of;

constexpr std::uint64_t MiB = std::uint64_t{1} << 20;
constexpr std::uint64_t GiB = std::uint64_t{1} << 30;

std::vector<std::string> types_of(stack_description const& stack)
{
  std::vector<std::string> types;
  for (auto const& layer : stack.layers) { types.emplace_back(layer.type()); }
  return types;
}

TEST(ConfigLoad, PoolExample)
{
  auto const stack = load_file(example("pool.toml"), environment{});
  EXPECT_EQ(types_of(stack), (std::vector<std::string>{"pool", "cuda"}));
  EXPECT_EQ(stack.stack_origin, value_origin::file);
  auto const& initial = stack.layers[0].at("initial_size");
  EXPECT_EQ(size_of(initial), (size_spec{.percent = 50, .is_percent = true}));
  EXPECT_EQ(initial.origin, value_origin::file);
  EXPECT_EQ(initial.location.line, 7U);
  EXPECT_EQ(initial.location.column, 16U);
  EXPECT_EQ(size_of(stack.layers[0].at("maximum_size")), (size_spec{.percent = 90, .is_percent = true}));
  EXPECT_EQ(stack.layers[1].location.line, 11U);
}

TEST(ConfigLoad, BinningOverPoolExample)
{
  auto const stack = load_file(example("binning_pool.toml"), environment{});
  EXPECT_EQ(types_of(stack), (std::vector<std::string>{"statistics", "binning", "pool", "cuda"}));
  EXPECT_EQ(std::get<std::int64_t>(stack.layers[1].at("min_size_exponent").value), 8);
  EXPECT_EQ(std::get<std::int64_t>(stack.layers[1].at("max_size_exponent").value), 20);
  EXPECT_FALSE(stack.layers[1].at("bins").is_set());
  EXPECT_EQ(size_of(stack.layers[2].at("initial_size")).bytes, 8 * GiB);
  EXPECT_TRUE(std::get<bool>(stack.shim_setting("stats_at_exit").value));
  EXPECT_EQ(stack.shim_setting("stats_at_exit").origin, value_origin::file);
}

TEST(ConfigLoad, LoggingExample)
{
  auto const stack = load_file(example("logging_trace.toml"), environment{});
  EXPECT_EQ(types_of(stack), (std::vector<std::string>{"logging", "pool", "cuda"}));
  EXPECT_EQ(std::get<std::string>(stack.layers[0].at("file").value), "rmm-trace-%p-dev%d.csv");
  EXPECT_FALSE(std::get<bool>(stack.layers[0].at("auto_flush").value));
}

TEST(ConfigLoad, MemoryLimitExample)
{
  auto const stack = load_file(example("memory_limit.toml"), environment{});
  EXPECT_EQ(types_of(stack), (std::vector<std::string>{"limiting", "pool", "cuda"}));
  EXPECT_EQ(size_of(stack.layers[0].at("limit")).bytes, 4 * GiB);
  EXPECT_EQ(size_of(stack.layers[0].at("alignment")).bytes, 256U);
  EXPECT_EQ(stack.layers[0].at("alignment").origin, value_origin::built_in);
}

TEST(ConfigLoad, BuiltInStackIsASmallGrowingPoolOverCuda)
{
  auto const stack = load_default(environment{});
  EXPECT_EQ(types_of(stack), (std::vector<std::string>{"pool", "cuda"}));
  EXPECT_EQ(stack.stack_origin, value_origin::built_in);
  EXPECT_EQ(size_of(stack.layers[0].at("initial_size")).bytes, 32 * MiB);
  EXPECT_FALSE(stack.layers[0].at("maximum_size").is_set());
  EXPECT_TRUE(std::get<bool>(stack.shim_setting("enabled").value));

  // The TOML rendering of the built-in stack describes the same values.
  auto const from_text = load_string(default_stack_toml(), "default.toml", environment{});
  ASSERT_EQ(types_of(from_text), types_of(stack));
  EXPECT_EQ(from_text.layers[0].at("initial_size").value, stack.layers[0].at("initial_size").value);
  EXPECT_EQ(from_text.layers[0].at("maximum_size").value, stack.layers[0].at("maximum_size").value);
}

TEST(ConfigLoad, WithoutRmmConfigTheBuiltInStackServes)
{
  auto const stack = load_from_environment(environment{});
  EXPECT_EQ(stack.stack_origin, value_origin::built_in);
  EXPECT_EQ(types_of(stack), (std::vector<std::string>{"pool", "cuda"}));
}

TEST(ConfigLoad, ADirectoryIsNotAConfigurationFile)
{
  auto const directory = std::filesystem::temp_directory_path();
  try {
    (void)load_file(directory, environment{});
    FAIL() << "a directory was read as an empty file (the built-in stack)";
  } catch (config_error const& e) {
    EXPECT_NE(e.found().find("a directory"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find(directory.string()), std::string::npos) << e.what();
  }
}

TEST(ConfigLoad, RmmConfigNamesTheFile)
{
  environment env{{{"RMM_CONFIG", example("memory_limit.toml").string()}}};
  auto const stack = load_from_environment(env);
  EXPECT_EQ(types_of(stack), (std::vector<std::string>{"limiting", "pool", "cuda"}));
  EXPECT_EQ(stack.source, example("memory_limit.toml").string());
}

TEST(ConfigLoad, AFileWithOnlyShimSettingsRunsTheBuiltInStack)
{
  auto const stack = load_string("[shim]\nverbose = true\n", "shim.toml", environment{});
  EXPECT_EQ(stack.stack_origin, value_origin::built_in);
  EXPECT_EQ(types_of(stack), (std::vector<std::string>{"pool", "cuda"}));
  EXPECT_TRUE(std::get<bool>(stack.shim_setting("verbose").value));
  EXPECT_EQ(stack.shim_setting("verbose").location.line, 2U);
}

TEST(ConfigLoad, EveryFileTypeWithItsParameters)
{
  auto const stack = load_string(R"(
resource = [
  { type = "logging", file = "log-%p.csv", auto_flush = true },
  { type = "statistics" },
  { type = "tracking", capture_stacks = true },
  { type = "limiting", limit = "80%", alignment = "4KiB" },
  { type = "aligned", alignment = 4096, alignment_threshold = "1MiB" },
  { type = "thread_safe" },
  { type = "prefetch" },
  { type = "binning", bins = [256, 1000, "4KiB"] },
  { type = "fixed_size", block_size = "2MiB", blocks_to_preallocate = 4 },
  { type = "arena", arena_size = "1GiB", dump_log_on_failure = true },
  { type = "pool", initial_size = 1048576, maximum_size = "2GiB" },
  { type = "cuda_async", initial_pool_size = "1GiB", release_threshold = 0, export_handle_type = "posix_file_descriptor" },
]
)",
                                 "all.toml", environment{});
  EXPECT_EQ(types_of(stack),
            (std::vector<std::string>{"logging", "statistics", "tracking", "limiting", "aligned", "thread_safe",
                                      "prefetch", "binning", "fixed_size", "arena", "pool", "cuda_async"}));
  EXPECT_EQ(std::get<std::vector<std::uint64_t>>(stack.layers[7].at("bins").value),
            (std::vector<std::uint64_t>{256, 1000, 4096}));
  EXPECT_EQ(std::get<std::int64_t>(stack.layers[8].at("blocks_to_preallocate").value), 4);
  EXPECT_EQ(size_of(stack.layers[11].at("release_threshold")).bytes, 0U);
  EXPECT_EQ(std::get<std::string>(stack.layers[11].at("export_handle_type").value), "posix_file_descriptor");
}

TEST(ConfigLoad, EveryBottomResource)
{
  for (auto const* type : {"cuda", "managed", "pinned_host", "system", "cuda_async"}) {
    auto const stack =
      load_string(std::string{"[[resource]]\ntype = \"pool\"\n[[resource]]\ntype = \""} + type + "\"\n", "bottom.toml",
                  environment{});
    EXPECT_EQ(stack.layers.back().type(), type);
  }
}

TEST(ConfigLoad, DescribeShowsEveryValueAndItsOrigin)
{
  environment env{{{"RMM_POOL_MAXIMUM_SIZE", "90%"}}};
  auto const stack = load_file(example("pool.toml"), env);
  build_context const device{.device = rmm::cuda_device_id{0}, .free_bytes = 100 * GiB, .total_bytes = 128 * GiB};
  auto const text = describe(stack, device);
  EXPECT_NE(text.find("1. pool"), std::string::npos) << text;
  EXPECT_NE(text.find("2. cuda"), std::string::npos) << text;
  EXPECT_NE(text.find("initial_size = \"50%\" = 50 GiB of 100 GiB free"), std::string::npos) << text;
  EXPECT_NE(text.find("file " + example("pool.toml").string() + ":7:16"), std::string::npos) << text;
  EXPECT_NE(text.find("environment RMM_POOL_MAXIMUM_SIZE"), std::string::npos) << text;
  EXPECT_NE(text.find("enabled = true"), std::string::npos) << text;
  EXPECT_NE(text.find("default"), std::string::npos) << text;
  EXPECT_NE(describe(load_default(environment{})).find("maximum_size = (unset: no maximum"), std::string::npos);
}

}  // namespace
