// SPDX-License-Identifier: Apache-2.0
// What a pause's host side costs: filling host memory as large as the paused contents from a
// 16 MiB buffer (standing in for the page-locked staging buffers) with several threads, as the
// staged copy does. The memory is fresh each time (the way a pause gets it), fresh and populated
// first, kept from an earlier fill (the way a pause gets it with pause_keeps_host_memory), or kept
// but given back lazily after each fill (the way a pause gets it by default: MADV_FREE, the kernel
// takes the pages only when it runs short, so a later fill usually finds them still there).
// Host only: no GPU needed, but run it on the GPU host to learn that host's figures.

#include "mr/detail/staged_copy_threads.hpp"

#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t huge_page = std::size_t{2} << 20;
constexpr std::size_t chunk     = std::size_t{16} << 20;

enum class way { fresh_advised, fresh_plain, fresh_populated, fresh_populated_by_chunk, kept, kept_lazily_freed };

unsigned char* allocate(std::size_t bytes, bool advise)
{
  auto* data = static_cast<unsigned char*>(std::aligned_alloc(huge_page, bytes));  // NOLINT
  if (data != nullptr && advise) { (void)::madvise(data, bytes, MADV_HUGEPAGE); }
  return data;
}

/// Each thread takes every n-th chunk of the destination, as the staged copy's workers do; with
/// `populate_chunks`, it populates each chunk's pages before it copies into them.
void fill(unsigned char* to,
          std::size_t bytes,
          unsigned char const* from,
          unsigned threads,
          bool populate_chunks = false)
{
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([=] {
      for (std::size_t at = t * chunk; at < bytes; at += std::size_t{threads} * chunk) {
        auto const n = std::min(chunk, bytes - at);
#ifdef MADV_POPULATE_WRITE
        if (populate_chunks) { (void)::madvise(to + at, n, MADV_POPULATE_WRITE); }
#endif
        std::memcpy(to + at, from, n);
      }
    });
  }
  for (auto& w : workers) { w.join(); }
}

/// Populates the page tables in slices, one a thread, without a fault a page.
bool populate(unsigned char* data, std::size_t bytes, unsigned threads)
{
#ifdef MADV_POPULATE_WRITE
  auto const slice = (bytes / threads + huge_page - 1) / huge_page * huge_page;
  std::vector<std::thread> workers;
  std::vector<int> results(threads, 0);
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([=, &results] {
      auto const at = std::size_t{t} * slice;
      if (at < bytes) { results[t] = ::madvise(data + at, std::min(slice, bytes - at), MADV_POPULATE_WRITE); }
    });
  }
  for (auto& w : workers) { w.join(); }
  return std::ranges::all_of(results, [](int r) { return r == 0; });
#else
  (void)data, (void)bytes, (void)threads;
  return false;
#endif
}

std::string first_line(char const* path)
{
  std::ifstream file{path};
  std::string line;
  std::getline(file, line);
  return line.empty() ? "unknown" : line;
}

void host_fill(benchmark::State& state, way how)
{
  auto const bytes = static_cast<std::size_t>(state.range(0)) << 30;
  auto const threads =
    state.range(1) > 0 ? static_cast<unsigned>(state.range(1)) : rmm::mr::detail::staged_copy_host_threads();
  std::vector<unsigned char> source(chunk, 0x5a);
  unsigned char* kept     = nullptr;
  bool const lazily_freed = how == way::kept_lazily_freed;
  if (how == way::kept || lazily_freed) {
    kept = allocate(bytes, true);
    if (kept == nullptr) { return state.SkipWithError("no host memory for the kept copy"); }
    fill(kept, bytes, source.data(), threads);
    if (lazily_freed && ::madvise(kept, bytes, MADV_FREE) != 0) {
      std::free(kept);  // NOLINT
      return state.SkipWithError("MADV_FREE failed (Linux 4.5 or later has it)");
    }
  }
  for (auto _ : state) {
    auto* to = kept != nullptr ? kept : allocate(bytes, how != way::fresh_plain);
    if (to == nullptr) { return state.SkipWithError("no host memory for the copy"); }
    if (how == way::fresh_populated && !populate(to, bytes, threads)) {
      std::free(to);  // NOLINT
      return state.SkipWithError("MADV_POPULATE_WRITE failed (Linux 5.14 or later has it)");
    }
    fill(to, bytes, source.data(), threads, how == way::fresh_populated_by_chunk);
    benchmark::DoNotOptimize(to[bytes - 1]);
    if (to != kept) { std::free(to); }  // NOLINT
    // Given back lazily, as a resume could: the kernel takes the pages only when it needs them.
    if (lazily_freed) { (void)::madvise(to, bytes, MADV_FREE); }
  }
  std::free(kept);  // NOLINT
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.counters["threads"] = threads;
}

void fresh_advised(benchmark::State& state) { host_fill(state, way::fresh_advised); }
void fresh_plain(benchmark::State& state) { host_fill(state, way::fresh_plain); }
void fresh_populated(benchmark::State& state) { host_fill(state, way::fresh_populated); }
void fresh_populated_by_chunk(benchmark::State& state) { host_fill(state, way::fresh_populated_by_chunk); }
void kept(benchmark::State& state) { host_fill(state, way::kept); }
void kept_lazily_freed(benchmark::State& state) { host_fill(state, way::kept_lazily_freed); }

// GiB filled and host threads (0: the staged copy's count); a few iterations each, in wall time
// (the threads do the work). The two ways a pause can take are also timed with fewer and more
// threads than the staged copy uses, to show whether its count is the right one on this host.
void sizes(benchmark::internal::Benchmark* b) { b->Args({1, 0})->Args({8, 0}); }
void sizes_and_threads(benchmark::internal::Benchmark* b) { sizes(b->Args({8, 4})->Args({8, 16})); }

BENCHMARK(fresh_advised)->Apply(sizes_and_threads)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(fresh_plain)->Apply(sizes)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(fresh_populated)->Apply(sizes)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(fresh_populated_by_chunk)->Apply(sizes)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(kept)->Apply(sizes_and_threads)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(kept_lazily_freed)->Apply(sizes)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv)
{
  benchmark::AddCustomContext("transparent_hugepage", first_line("/sys/kernel/mm/transparent_hugepage/enabled"));
  benchmark::AddCustomContext("transparent_hugepage_defrag", first_line("/sys/kernel/mm/transparent_hugepage/defrag"));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) { return 1; }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
