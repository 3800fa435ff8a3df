// What each adaptor adds per allocation event, against the bare pool under it in the same run.
//
// Every iteration frees the oldest of 64 live blocks and allocates a new one (sizes from a fixed
// random table, 256 B - 64 KiB), i.e. two events. The pool under every adaptor is primed, so the
// numbers are the adaptor's own cost plus the pool's fast path; subtract the `pool` row for the
// overhead. The threaded variants run the same loop on 8 threads sharing one adaptor.
#include <rmm/cuda_stream.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>
#include <functional>
#include <random>
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
    block = {mr.allocate(stream, sizes[next % sizes.size()]), sizes[next % sizes.size()]};
    ++next;
  }
  std::size_t oldest{0};
  for (auto _ : state) {
    auto& block = live[oldest];
    mr.deallocate(stream, block.first, block.second);
    auto const size = sizes[next++ % sizes.size()];
    block           = {mr.allocate(stream, size), size};
    benchmark::DoNotOptimize(block.first);
    oldest = (oldest + 1) % live_blocks;
  }
  for (auto [ptr, size] : live) { mr.deallocate(stream, ptr, size); }
  stream.synchronize();
  state.SetItemsProcessed(2 * state.iterations());  // events
}

/// One adaptor over the shared pool per benchmark; threads of one benchmark share it.
template <class MakeAdaptor>
void register_adaptor(char const* name, MakeAdaptor make)
{
  auto adaptor = std::make_shared<rmm::mr::any_device_resource>(make(shared_pool()));
  auto run     = [adaptor](benchmark::State& state) { churn(state, *adaptor); };
  benchmark::RegisterBenchmark(name, run)->UseRealTime();
  benchmark::RegisterBenchmark((std::string{name} + "/threads:8").c_str(), run)->Threads(8)->UseRealTime();
}

int register_all()
{
  using namespace rmm::mr;
  register_adaptor("adaptor_overhead/pool", [](pool_memory_resource& pool) { return any_device_resource{pool}; });
  register_adaptor("adaptor_overhead/statistics",
                   [](pool_memory_resource& pool) { return any_device_resource{statistics_resource_adaptor{pool}}; });
  register_adaptor("adaptor_overhead/logging", [](pool_memory_resource& pool) {
    return any_device_resource{logging_resource_adaptor{pool, "/dev/null"}};
  });
  register_adaptor("adaptor_overhead/tracking",
                   [](pool_memory_resource& pool) { return any_device_resource{tracking_resource_adaptor{pool}}; });
  register_adaptor("adaptor_overhead/tracking_stacks", [](pool_memory_resource& pool) {
    return any_device_resource{tracking_resource_adaptor{pool, true}};
  });
  register_adaptor("adaptor_overhead/limiting", [](pool_memory_resource& pool) {
    return any_device_resource{limiting_resource_adaptor{pool, std::size_t{8} << 30}};
  });
  register_adaptor("adaptor_overhead/thread_safe",
                   [](pool_memory_resource& pool) { return any_device_resource{thread_safe_resource_adaptor{pool}}; });
  register_adaptor("adaptor_overhead/aligned_4k", [](pool_memory_resource& pool) {
    return any_device_resource{aligned_resource_adaptor{pool, 4096, 0}};
  });
  return 0;
}

int const registered = register_all();

}  // namespace

BENCHMARK_MAIN();
