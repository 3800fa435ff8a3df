// SPDX-License-Identifier: Apache-2.0
// What each adaptor adds per allocation event, against the bare pool under it in the same run.
//
// Every iteration frees the oldest of 64 live blocks and allocates a new one (sizes from a fixed
// random table, 256 B - 64 KiB), i.e. two events. The pool under every adaptor is primed, so the
// numbers are the adaptor's own cost plus the pool's fast path; subtract the `pool` row for the
// overhead. The threaded variants run the same loop on 8 threads sharing one adaptor.
#include <rmm/aligned.hpp>
#include <rmm/config/build.hpp>
#include <rmm/config/load.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::size_t live_blocks = 64;

std::vector<std::size_t> const& request_sizes()
{
  static auto const sizes = [] {
    std::mt19937_64 rng{1};
    std::vector<std::size_t> table(4096);
    for (auto& size : table) { size = 256 + rng() % (64 << 10); }
    return table;
  }();
  return sizes;
}

rmm::mr::pool_memory_resource& shared_pool()
{
  static rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, std::size_t{1} << 30};
  return pool;
}

void churn(benchmark::State& state, rmm::device_async_resource_ref mr)
{
  auto const& sizes = request_sizes();
  std::array<std::pair<void*, std::size_t>, live_blocks> live{};
  rmm::cuda_stream stream;  // each thread its own, as in real programs
  std::size_t next{static_cast<std::size_t>(state.thread_index()) * 97};
  for (auto& block : live) {
    block = {mr.allocate(stream, sizes[next % sizes.size()], rmm::CUDA_ALLOCATION_ALIGNMENT),
             sizes[next % sizes.size()]};
    ++next;
  }
  std::size_t oldest{0};
  for (auto _ : state) {
    auto& block = live[oldest];
    mr.deallocate(stream, block.first, block.second, rmm::CUDA_ALLOCATION_ALIGNMENT);
    auto const size = sizes[next++ % sizes.size()];
    block           = {mr.allocate(stream, size, rmm::CUDA_ALLOCATION_ALIGNMENT), size};
    benchmark::DoNotOptimize(block.first);
    oldest = (oldest + 1) % live_blocks;
  }
  for (auto [ptr, size] : live) { mr.deallocate(stream, ptr, size, rmm::CUDA_ALLOCATION_ALIGNMENT); }
  stream.synchronize();
  state.SetItemsProcessed(2 * state.iterations());  // events
}

/// One adaptor over the shared pool per benchmark; threads of one benchmark share it. The adaptor
/// is the configuration's layer `toml` describes, built over the pool.
void register_adaptor(char const* name, std::string_view toml)
{
  auto const stack =
    rmm::config::load_string(std::string{toml} + "[[resource]]\ntype = \"cuda\"\n", name, rmm::config::environment{});
  auto adaptor = std::make_shared<rmm::mr::any_device_resource>(
    rmm::config::build_layers_over(stack, rmm::get_current_cuda_device(), shared_pool()).front());
  auto run = [adaptor](benchmark::State& state) { churn(state, *adaptor); };
  benchmark::RegisterBenchmark(name, run)->UseRealTime();
  benchmark::RegisterBenchmark((std::string{name} + "/threads:8").c_str(), run)->Threads(8)->UseRealTime();
}

int register_all()
{
  {
    auto pool = std::make_shared<rmm::mr::any_device_resource>(shared_pool());
    auto run  = [pool](benchmark::State& state) { churn(state, *pool); };
    benchmark::RegisterBenchmark("adaptor_overhead/pool", run)->UseRealTime();
    benchmark::RegisterBenchmark("adaptor_overhead/pool/threads:8", run)->Threads(8)->UseRealTime();
  }
  register_adaptor("adaptor_overhead/statistics", "[[resource]]\ntype = \"statistics\"\n");
  register_adaptor("adaptor_overhead/logging", "[[resource]]\ntype = \"logging\"\nfile = \"/dev/null\"\n");
  register_adaptor("adaptor_overhead/tracking", "[[resource]]\ntype = \"tracking\"\n");
  register_adaptor("adaptor_overhead/tracking_stacks", "[[resource]]\ntype = \"tracking\"\ncapture_stacks = true\n");
  register_adaptor("adaptor_overhead/limiting", "[[resource]]\ntype = \"limiting\"\nlimit = \"8GiB\"\n");
  register_adaptor("adaptor_overhead/thread_safe", "[[resource]]\ntype = \"thread_safe\"\n");
  register_adaptor("adaptor_overhead/aligned_4k", "[[resource]]\ntype = \"aligned\"\nalignment = 4096\n");
  return 0;
}

int const registered = register_all();

}  // namespace

BENCHMARK_MAIN();
