// SPDX-License-Identifier: Apache-2.0
// Building stacks on a device: every example, every type, percentages, devices.

#include "config_test_helpers.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>
#include <rmm/mr/detail/resource_cast.hpp>

#include "backend.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

using namespace rmm::config;
using rmm::config::test::example;
using rmm::mr::any_device_resource;

constexpr std::uint64_t MiB = std::uint64_t{1} << 20;
constexpr std::uint64_t GiB = std::uint64_t{1} << 30;

rmm::cuda_device_id const device0{0};

template <class Resource>
Resource& layer_as(std::vector<any_device_resource> const& layers, std::size_t index)
{
  auto* resource = rmm::mr::detail::resource_cast<Resource>(layers.at(index));
  if (resource == nullptr) { throw std::runtime_error{"layer " + std::to_string(index) + " has another type"}; }
  return *resource;
}

/// Allocates and frees through the stack's top, as a program would.
void exercise(any_device_resource& top, std::size_t bytes = MiB)
{
  void* pointer = top.allocate_sync(bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  ASSERT_NE(pointer, nullptr);
  top.deallocate_sync(pointer, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

std::filesystem::path scratch_directory()
{
  auto const dir = std::filesystem::temp_directory_path() / ("rmm_config_build_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(ConfigBuild, PoolExample)
{
  auto const free_before = rmm::config::device_context(device0).free_bytes;
  auto layers            = build_layers(load_file(example("pool.toml"), environment{}), device0);
  ASSERT_EQ(layers.size(), 2U);
  auto& pool = layer_as<rmm::mr::pool_memory_resource>(layers, 0);
  layer_as<rmm::mr::cuda_memory_resource>(layers, 1);
  // Growing by mapping rounds the initial size up to the device's mapping granularity (2 MiB).
  auto const initial = resolve_size(size_spec{.percent = 50, .is_percent = true}, free_before);
  EXPECT_GE(pool.pool_size(), initial);
  EXPECT_LT(pool.pool_size(), initial + (std::size_t{2} << 20));
  EXPECT_EQ(pool.maximum_pool_size(), resolve_size(size_spec{.percent = 90, .is_percent = true}, free_before));
  exercise(layers.front());
}

TEST(ConfigBuild, BinningOverPoolExample)
{
  auto layers = build_layers(load_file(example("binning_pool.toml"), environment{}), device0);
  ASSERT_EQ(layers.size(), 4U);
  auto& statistics = layer_as<rmm::mr::statistics_resource_adaptor>(layers, 0);
  auto& binning    = layer_as<rmm::mr::binning_memory_resource>(layers, 1);
  auto& pool       = layer_as<rmm::mr::pool_memory_resource>(layers, 2);
  layer_as<rmm::mr::cuda_memory_resource>(layers, 3);
  std::vector<std::size_t> expected_bins;
  for (int e = 8; e <= 20; ++e) { expected_bins.push_back(std::size_t{1} << e); }
  EXPECT_EQ(binning.bin_sizes(), expected_bins);
  EXPECT_EQ(pool.pool_size(), 8 * GiB);
  exercise(layers.front(), 300);
  EXPECT_EQ(statistics.get_bytes_counter().total, 300);
}

TEST(ConfigBuild, LoggingExampleWritesItsTrace)
{
  auto const dir = scratch_directory();
  environment env{{{"RMM_LOGGING_FILE", (dir / "trace-%p-dev%d.csv").string()}, {"RMM_LOGGING_AUTO_FLUSH", "true"}}};
  {
    auto layers = build_layers(load_file(example("logging_trace.toml"), env), device0);
    ASSERT_EQ(layers.size(), 3U);
    layer_as<rmm::mr::logging_resource_adaptor>(layers, 0);
    EXPECT_EQ(layer_as<rmm::mr::pool_memory_resource>(layers, 1).pool_size(), 1 * GiB);
    exercise(layers.front(), 4096);
  }
  auto const file = dir / ("trace-" + std::to_string(::getpid()) + "-dev0.csv");
  std::ifstream log{file};
  ASSERT_TRUE(log) << file;
  std::string header, allocate_row, free_row;
  std::getline(log, header);
  std::getline(log, allocate_row);
  std::getline(log, free_row);
  EXPECT_EQ(header, rmm::mr::logging_resource_adaptor::header());
  EXPECT_NE(allocate_row.find(",allocate,"), std::string::npos) << allocate_row;
  EXPECT_NE(free_row.find(",free,"), std::string::npos) << free_row;
  std::filesystem::remove_all(dir);
}

TEST(ConfigBuild, MemoryLimitExampleRefusesPastTheLimit)
{
  auto layers = build_layers(load_file(example("memory_limit.toml"), environment{}), device0);
  ASSERT_EQ(layers.size(), 3U);
  auto& limiting = layer_as<rmm::mr::limiting_resource_adaptor>(layers, 0);
  EXPECT_EQ(limiting.get_allocation_limit(), 4 * GiB);
  layer_as<rmm::mr::pool_memory_resource>(layers, 1);
  auto& top     = layers.front();
  void* granted = top.allocate_sync(3 * GiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
  EXPECT_THROW((void)top.allocate_sync(2 * GiB, rmm::CUDA_ALLOCATION_ALIGNMENT), rmm::out_of_memory);
  top.deallocate_sync(granted, 3 * GiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

TEST(ConfigBuild, BuiltInStack)
{
  auto layers = build_layers(load_default(environment{}), device0);
  ASSERT_EQ(layers.size(), 2U);
  auto& pool = layer_as<rmm::mr::pool_memory_resource>(layers, 0);
  EXPECT_EQ(pool.pool_size(), 32 * MiB);
  EXPECT_FALSE(pool.maximum_pool_size().has_value());
  layer_as<rmm::mr::cuda_memory_resource>(layers, 1);
  exercise(layers.front(), 512 * MiB);  // grows past its initial size on demand
}

TEST(ConfigBuild, EveryTypeBuilds)
{
  auto const dir  = scratch_directory();
  auto const toml = R"(resource = [
  { type = "logging", file = ")" +
                    (dir / "all-%p.csv").string() + R"(" },
  { type = "statistics" },
  { type = "tracking" },
  { type = "limiting", limit = "50%", alignment = "4KiB" },
  { type = "aligned", alignment = 4096, alignment_threshold = "64KiB" },
  { type = "thread_safe" },
  { type = "prefetch" },
  { type = "binning", bins = [256, 1000, "4KiB"] },
  { type = "fixed_size", block_size = "4MiB", blocks_to_preallocate = 4 },
  { type = "arena", arena_size = "1GiB" },
  { type = "pool", initial_size = "2GiB" },
  { type = "cuda_async", initial_pool_size = "2GiB", release_threshold = 0 },
]
)";
  {
    auto layers = build_layers(load_string(toml, "all.toml", environment{}), device0);
    ASSERT_EQ(layers.size(), 12U);
    layer_as<rmm::mr::logging_resource_adaptor>(layers, 0);
    layer_as<rmm::mr::statistics_resource_adaptor>(layers, 1);
    layer_as<rmm::mr::tracking_resource_adaptor>(layers, 2);
    layer_as<rmm::mr::limiting_resource_adaptor>(layers, 3);
    EXPECT_EQ(layer_as<rmm::mr::aligned_resource_adaptor>(layers, 4).alignment(), 4096U);
    EXPECT_EQ(layer_as<rmm::mr::aligned_resource_adaptor>(layers, 4).alignment_threshold(), 65536U);
    layer_as<rmm::mr::thread_safe_resource_adaptor>(layers, 5);
    layer_as<rmm::mr::prefetch_resource_adaptor>(layers, 6);
    EXPECT_EQ(layer_as<rmm::mr::binning_memory_resource>(layers, 7).bin_sizes(),
              (std::vector<std::size_t>{256, 1000, 4096}));
    EXPECT_EQ(layer_as<rmm::mr::fixed_size_memory_resource>(layers, 8).get_block_size(), 4 * MiB);
    layer_as<rmm::mr::arena_memory_resource>(layers, 9);
    layer_as<rmm::mr::pool_memory_resource>(layers, 10);
    layer_as<rmm::mr::cuda_async_memory_resource>(layers, 11);
    exercise(layers.front(), 1000);  // a bin
    exercise(layers.front(), MiB);   // past the bins: one 4 MiB block
  }
  std::filesystem::remove_all(dir);
}

TEST(ConfigBuild, EveryBottomResource)
{
  auto const build_bottom = [](std::string const& type) {
    return build_layers(
      load_string("resource = [{type = \"statistics\"}, {type = \"" + type + "\"}]", "b.toml", environment{}), device0);
  };
  layer_as<rmm::mr::cuda_memory_resource>(build_bottom("cuda"), 1);
  layer_as<rmm::mr::managed_memory_resource>(build_bottom("managed"), 1);
  layer_as<rmm::mr::pinned_host_memory_resource>(build_bottom("pinned_host"), 1);
  layer_as<rmm::mr::cuda_async_memory_resource>(build_bottom("cuda_async"), 1);
  layer_as<rmm::mr::cuda_async_managed_memory_resource>(build_bottom("cuda_async_managed"), 1);
  for (auto const* type : {"cuda", "managed", "pinned_host", "cuda_async", "cuda_async_managed"}) {
    auto layers = build_bottom(type);
    exercise(layers.front());
  }
  // The emulator is given pageable memory access (see CMakeLists.txt); the H200 has none, and
  // then the builder must refuse "system" with a positioned error instead of building it.
  if (!rmm::mr::is_system_memory_supported(device0)) {
    EXPECT_THROW((void)build_bottom("system"), config_error);
    EXPECT_THROW((void)build_bottom("sam_headroom"), config_error);
    return;
  }
  {
    auto layers = build_layers(
      load_string("resource = [{type = \"sam_headroom\", headroom = \"1MiB\"}]", "s.toml", environment{}), device0);
    EXPECT_EQ(layer_as<rmm::mr::sam_headroom_memory_resource>(layers, 0).headroom(), MiB);
    exercise(layers.front());
  }
  layer_as<rmm::mr::system_memory_resource>(build_bottom("system"), 1);
  {
    auto layers = build_bottom("system");
    exercise(layers.front());
  }
}

TEST(ConfigBuild, PercentagesReferToFreeMemoryBeforeBuilding)
{
  // The pool takes half of the free memory first; the limit is still 90% of the same figure, not
  // 90% of what the pool left. (Free memory is not compared with a reading of the test's own: on
  // a GPU other tests allocate meanwhile.)
  auto layers = build_layers(
    load_string(
      "resource = [{type = \"limiting\", limit = \"90%\"}, {type = \"pool\", initial_size = \"50%\"}, {type = "
      "\"cuda\"}]",
      "p.toml", environment{}),
    device0);
  auto const limit =
    static_cast<double>(layer_as<rmm::mr::limiting_resource_adaptor>(layers, 0).get_allocation_limit());
  auto const pool_size = static_cast<double>(layer_as<rmm::mr::pool_memory_resource>(layers, 1).pool_size());
  ASSERT_GT(pool_size, 0.0);
  // Both fractions of one free-memory figure, up to the pool's rounding to its growth granularity.
  EXPECT_NEAR(limit / 0.9, pool_size / 0.5, 64.0 * (1 << 20));
}

TEST(ConfigBuild, ChecksThatNeedTheDevice)
{
  auto const context = rmm::config::device_context(device0);
  // Bytes against a percentage can only be compared on the device.
  auto const mixed = load_string(
    "[[resource]]\ntype = \"pool\"\ninitial_size = \"8GiB\"\nmaximum_size = \"0.001%\"\n[[resource]]\ntype = "
    "\"cuda\"\n",
    "mixed.toml", environment{});
  try {
    check_against_device(mixed, context);
    FAIL() << "a maximum below the initial size was accepted";
  } catch (config_error const& e) {
    EXPECT_EQ(e.location().line, 4U) << e.what();
    EXPECT_EQ(e.location().column, 16U) << e.what();
    EXPECT_NE(e.found().find("below initial_size = \"8GiB\""), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)build(mixed, device0), config_error);

  auto const too_big = load_string("resource = [{type = \"pool\", initial_size = \"4TiB\"}, {type = \"cuda\"}]",
                                   "big.toml", environment{});
  try {
    check_against_device(too_big, context);
    FAIL() << "an initial size beyond the device's memory was accepted";
  } catch (config_error const& e) {
    EXPECT_NE(e.expected().find("at most the device's"), std::string::npos) << e.what();
    EXPECT_EQ(e.location().column, 44U) << e.what();
  }
}

/// The config_error `stack` raises against the device, or a failure.
config_error device_error(stack_description const& stack, build_context const& context)
{
  try {
    check_against_device(stack, context);
  } catch (config_error const& e) {
    return e;
  }
  ADD_FAILURE() << "accepted on the device";
  return config_error{{}, "", ""};
}

TEST(ConfigBuild, FixedSizeBlocksLargerThanTheDeviceBlameTheBlockSize)
{
  auto const context = build_context{.device = device0, .free_bytes = 16 * GiB, .total_bytes = 16 * GiB};
  // One block alone exceeds the device: the block size is wrong, whatever the block count.
  auto const one_block = device_error(
    load_string("[[resource]]\ntype = \"fixed_size\"\nblock_size = \"1TiB\"\n[[resource]]\ntype = \"cuda\"\n", "f.toml",
                environment{}),
    context);
  EXPECT_EQ(one_block.location().line, 3U) << one_block.what();
  EXPECT_EQ(one_block.location().column, 14U) << one_block.what();
  EXPECT_NE(one_block.found().find("block_size = \"1TiB\""), std::string::npos) << one_block.what();
  EXPECT_NE(one_block.expected().find("16 GiB"), std::string::npos) << one_block.what();

  // Blocks that fit, but not that many of them: the value set last is blamed.
  auto const count = device_error(
    load_string("[[resource]]\ntype = \"fixed_size\"\nblock_size = \"1GiB\"\nblocks_to_preallocate = 32\n[[resource]]\n"
                "type = \"cuda\"\n",
                "f.toml", environment{}),
    context);
  EXPECT_EQ(count.location().line, 4U) << count.what();
  EXPECT_NE(count.found().find("32 blocks of 1 GiB"), std::string::npos) << count.what();
  auto const by_default = device_error(
    load_string("[[resource]]\ntype = \"fixed_size\"\nblock_size = \"1GiB\"\n[[resource]]\ntype = \"cuda\"\n", "f.toml",
                environment{}),
    context);
  EXPECT_EQ(by_default.location().line, 3U) << "blocks_to_preallocate is the built-in default: " << by_default.what();
  EXPECT_NE(by_default.found().find("128 blocks of 1 GiB"), std::string::npos) << by_default.what();
}

TEST(ConfigBuild, BinsThatCannotBeReservedOnTheDeviceAreRefused)
{
  auto const context = build_context{.device = device0, .free_bytes = 16 * GiB, .total_bytes = 16 * GiB};
  // Every bin reserves at least 8 of its blocks when the layer is built: 8 TiB for a 1 TiB bin.
  auto const exponent = device_error(
    load_string("[[resource]]\ntype = \"binning\"\nmax_size_exponent = 40\n[[resource]]\ntype = \"cuda\"\n", "b.toml",
                environment{}),
    context);
  EXPECT_EQ(exponent.location().line, 3U) << exponent.what();
  EXPECT_EQ(exponent.location().column, 21U) << exponent.what();
  EXPECT_NE(exponent.found().find("max_size_exponent = 40"), std::string::npos) << exponent.what();
  EXPECT_NE(exponent.expected().find("16 GiB"), std::string::npos) << exponent.what();

  auto const list = device_error(
    load_string("[[resource]]\ntype = \"binning\"\nbins = [256, \"1TiB\"]\n[[resource]]\ntype = \"cuda\"\n", "b.toml",
                environment{}),
    context);
  EXPECT_EQ(list.location().line, 3U) << list.what();
  EXPECT_NE(list.found().find("bins"), std::string::npos) << list.what();

  // What fits is accepted, and builds.
  auto const fits = load_string(
    "[[resource]]\ntype = \"binning\"\nmax_size_exponent = 26\n[[resource]]\ntype = \"cuda\"\n", "b.toml", {});
  EXPECT_NO_THROW(check_against_device(fits, context));
  auto top = build(fits, device0);
  exercise(top);
}

TEST(ConfigBuild, APercentageThatComesToZeroBytesIsRefused)
{
  // 1% of 1000 free bytes, rounded down to the 256-byte granularity: 0, below limit's minimum.
  auto const stack = load_string("[[resource]]\ntype = \"limiting\"\nlimit = \"1%\"\n[[resource]]\ntype = \"cuda\"\n",
                                 "tiny.toml", environment{});
  try {
    check_against_device(stack, build_context{.device = device0, .free_bytes = 1000, .total_bytes = 1000});
    FAIL() << "a limit of 0 bytes was accepted";
  } catch (config_error const& e) {
    EXPECT_EQ(e.location().line, 3U) << e.what();
    EXPECT_NE(e.expected().find("comes to at least 1 B"), std::string::npos) << e.what();
  }
}

TEST(ConfigBuild, BuildsOnTheRequestedDeviceAndRestoresTheCurrentOne)
{
  if (rmm::get_num_cuda_devices() < 2) { GTEST_SKIP() << "needs two devices"; }
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  auto const free_before = rmm::config::device_context(rmm::cuda_device_id{1}).free_bytes;
  auto top               = build(
                  load_string("resource = [{type = \"pool\", initial_size = \"1GiB\"}, {type = \"cuda\"}]", "d.toml", environment{}),
                  rmm::cuda_device_id{1});
  EXPECT_EQ(rmm::get_current_cuda_device(), rmm::cuda_device_id{0});
  EXPECT_EQ(rmm::config::device_context(rmm::cuda_device_id{1}).free_bytes, free_before - GiB);
}

TEST(ConfigBuild, LibraryEntryPoints)
{
  auto from_string =
    build_from_string("resource = [{type = \"statistics\"}, {type = \"cuda\"}]", device0, environment{});
  EXPECT_NE(rmm::mr::detail::resource_cast<rmm::mr::statistics_resource_adaptor>(from_string), nullptr);
  auto from_file =
    build_from_file(example("memory_limit.toml"), device0, environment{{{"RMM_LIMITING_LIMIT", "1GiB"}}});
  EXPECT_EQ(rmm::mr::detail::resource_cast<rmm::mr::limiting_resource_adaptor>(from_file)->get_allocation_limit(), GiB);
  auto from_environment = build_from_environment(device0, environment{{{"RMM_CONFIG", example("pool.toml").string()}}});
  EXPECT_NE(rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(from_environment), nullptr);
  auto built_in = build_from_environment(device0, environment{});
  EXPECT_EQ(rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(built_in)->pool_size(), 32 * MiB);
  exercise(from_string);
  exercise(from_file);
  exercise(from_environment);
  exercise(built_in);
}

}  // namespace

namespace {

TEST(ConfigBuild, PoolGrowthThroughVirtualMemoryIsASettingNotAnAccidentOfItsUpstream)
{
  auto const pool_of = [](std::string const& toml) {
    auto layers = build_layers(load_string(toml, "growth.toml", environment{}), rmm::cuda_device_id{0});
    for (auto const& layer : layers) {
      if (auto* pool = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(layer)) {
        return pool->grows_contiguously();
      }
    }
    ADD_FAILURE() << "no pool in the stack";
    return false;
  };
  // An adaptor between the pool and cuda no longer switches it off.
  EXPECT_TRUE(
    pool_of("[[resource]]\ntype = \"pool\"\n[[resource]]\ntype = \"statistics\"\n[[resource]]\ntype = \"cuda\"\n"));
  EXPECT_TRUE(pool_of("[[resource]]\ntype = \"pool\"\n[[resource]]\ntype = \"cuda\"\n"));
  EXPECT_FALSE(pool_of("[[resource]]\ntype = \"pool\"\ngrowth = \"upstream\"\n[[resource]]\ntype = \"cuda\"\n"));
  // Over another bottom the default is the upstream; asked for, virtual memory is used anyway.
  EXPECT_FALSE(pool_of("[[resource]]\ntype = \"pool\"\n[[resource]]\ntype = \"cuda_async\"\n"));
  EXPECT_TRUE(
    pool_of("[[resource]]\ntype = \"pool\"\ngrowth = \"virtual_memory\"\n[[resource]]\ntype = \"cuda_async\"\n"));
}

TEST(ConfigBuild, RemappingGrowthMovesFreeGranulesInsteadOfMappingMore)
{
  // What a 12 MiB request costs after an idle 8 MiB block was freed between two others: 4 MiB
  // remapping (the freed granules move to the end), 12 MiB without.
  auto const growth_for_12MiB = [](std::string const& toml, environment env) {
    auto layers = build_layers(load_string(toml, "remap.toml", std::move(env)), rmm::cuda_device_id{0});
    auto* pool  = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(layers.front());
    if (pool == nullptr) {
      ADD_FAILURE() << "no pool on top";
      return std::size_t{0};
    }
    void* a = pool->allocate_sync(8 * MiB);
    void* b = pool->allocate_sync(8 * MiB);
    pool->deallocate_sync(a, 8 * MiB);
    auto const before = pool->pool_size();
    void* c           = pool->allocate_sync(12 * MiB);
    auto const grown  = pool->pool_size() - before;
    pool->deallocate_sync(c, 12 * MiB);
    pool->deallocate_sync(b, 8 * MiB);
    return grown;
  };
  std::string const empty_pool = "[[resource]]\ntype = \"pool\"\ninitial_size = 0\n[[resource]]\ntype = \"cuda\"\n";
  EXPECT_EQ(growth_for_12MiB(empty_pool, environment{}), 12 * MiB);
  EXPECT_EQ(growth_for_12MiB(empty_pool, environment{{{"RMM_POOL_GROWTH", "remapping"}}}), 4 * MiB);
  EXPECT_EQ(growth_for_12MiB("[[resource]]\ntype = \"pool\"\ninitial_size = 0\ngrowth = \"remapping\"\n"
                             "[[resource]]\ntype = \"cuda\"\n",
                             environment{}),
            4 * MiB);
}

TEST(ConfigBuild, AStackBuiltOverAStandInBottomAllocatesThroughIt)
{
  // A pool that starts empty, over a counting adaptor standing in for cuda: its growth is counted.
  auto const stack = load_string("[[resource]]\ntype = \"pool\"\ninitial_size = 0\n[[resource]]\ntype = \"cuda\"\n",
                                 "over.toml", environment{});
  rmm::mr::statistics_resource_adaptor counted{rmm::mr::cuda_memory_resource{}};
  auto layers = build_layers_over(stack, device0, counted);
  ASSERT_EQ(layers.size(), 2U);
  auto* pool = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(layers.front());
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->pool_size(), 0U) << "initial_size = 0 reserves nothing";
  EXPECT_FALSE(pool->grows_contiguously()) << "the stand-in is not cuda: growth goes through it";
  void* p = layers.front().allocate_sync(MiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
  EXPECT_GE(counted.get_bytes_counter().value, static_cast<std::int64_t>(MiB));
  layers.front().deallocate_sync(p, MiB, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

TEST(ConfigBuild, AStackWithoutLayersIsRefused)
{
  // The loaders never return one; a description made in code can be empty.
  stack_description const empty{};
  EXPECT_THROW((void)build(empty, device0), rmm::logic_error);
  EXPECT_THROW((void)build_layers(empty, device0), rmm::logic_error);
  EXPECT_THROW((void)build_layers_over(empty, device0, rmm::mr::cuda_memory_resource{}), rmm::logic_error);
}

TEST(ConfigBuild, PoolGrowthIsRefusedWithItsPositionWhenMistyped)
{
  try {
    (void)load_string("[[resource]]\ntype = \"pool\"\ngrowth = \"mapped\"\n[[resource]]\ntype = \"cuda\"\n", "g.toml",
                      environment{});
    ADD_FAILURE() << "accepted";
  } catch (config_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("g.toml:3:10"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("\"virtual_memory\", \"remapping\", \"upstream\""), std::string::npos)
      << e.what();
  }
}

}  // namespace
