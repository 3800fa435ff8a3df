// SPDX-License-Identifier: Apache-2.0
// Threads that never called the CUDA runtime (no context is current on them) allocating and
// freeing through a pool and an arena on streams the main thread made: every driver call the
// engine makes must find the resource's device, and nothing may fail while the upstream has room.

#include <rmm/logger.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <scratch_path.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace rmm::test {
namespace {

constexpr int threads     = 8;
constexpr int repetitions = 100;

// The library reports a failed driver call (an event it could not create, say) in its debug log
// and carries on: the log goes to a file of this test's, which must hold no error when it is done.
scratch_path const debug_log{"fresh_threads", ".log"};  // removed at exit
[[maybe_unused]] bool const log_set = ::setenv("RMM_DEBUG_LOG_FILE", debug_log.str().c_str(), 1) == 0;

/// The error lines the library logged since the last call (the file is emptied).
std::string logged_errors()
{
  rmm::default_logger().flush();
  std::ifstream file{debug_log.str()};
  std::string errors;
  for (std::string line; std::getline(file, line);) {
    if (line.find("] [error] ") != std::string::npos || line.find("] [critical] ") != std::string::npos) {
      errors += line + "\n";
    }
  }
  std::ofstream{debug_log.str(), std::ios::trunc};
  return errors;
}

/// Random allocations and frees on `stream` from a thread with no current context; counts failures.
void churn(rmm::device_async_resource_ref mr,
           cudaStream_t stream,
           cudaStream_t free_stream,
           unsigned seed,
           std::atomic<int>& failures)
{
  std::mt19937 random{seed};
  std::uniform_int_distribution<std::size_t> size{1, std::size_t{64} << 10};
  std::vector<std::pair<void*, std::size_t>> live;
  for (int i = 0; i < 200; ++i) {
    if (live.empty() || random() % 3 != 0) {
      auto const bytes = size(random);
      try {
        live.emplace_back(mr.allocate(rmm::cuda_stream_view{stream}, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT), bytes);
      } catch (std::exception const&) {
        ++failures;
      }
    } else {
      auto const at = random() % live.size();
      // Some frees on another stream: its arena then needs an event for the memory.
      auto const on = random() % 2 == 0 ? stream : free_stream;
      mr.deallocate(rmm::cuda_stream_view{on}, live[at].first, live[at].second, rmm::CUDA_ALLOCATION_ALIGNMENT);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
    }
  }
  for (auto const& [p, bytes] : live) {
    mr.deallocate(rmm::cuda_stream_view{stream}, p, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
}

/// `free_elsewhere`: each thread frees some blocks on the next thread's stream.
template <class Resource>
void run_fresh_threads(Resource& mr, bool free_elsewhere)
{
  // Streams the program made itself (not rmm::cuda_stream, whose ids the library remembers).
  std::vector<cudaStream_t> streams(threads);
  for (auto& s : streams) { ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  for (int rep = 0; rep < repetitions; ++rep) {
    std::atomic<int> failures{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      auto const own   = streams[static_cast<std::size_t>(t)];
      auto const other = free_elsewhere ? streams[static_cast<std::size_t>((t + 1) % threads)] : own;
      workers.emplace_back(churn, rmm::device_async_resource_ref{mr}, own, other,
                           static_cast<unsigned>(rep * threads + t), std::ref(failures));
    }
    for (auto& w : workers) { w.join(); }
    ASSERT_EQ(failures.load(), 0) << "repetition " << rep << ": allocations failed with the device far from full";
    ASSERT_EQ(logged_errors(), "") << "repetition " << rep;
  }
  for (auto& s : streams) {
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
  }
}

TEST(FreshThreads, AStreamTakesWhatAnotherStreamFreedFromAThreadWithoutAContext)
{
  // All of the pool sits in one stream's arena: another stream's request, from a thread that never
  // called the runtime, must take it behind an event of the first stream.
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  constexpr std::size_t size = std::size_t{4} << 20;
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, size, size};
  cudaStream_t first{};
  cudaStream_t second{};
  ASSERT_EQ(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking), cudaSuccess);
  for (int rep = 0; rep < repetitions; ++rep) {
    std::string failure;
    std::thread fresh{[&] {
      try {
        void* all = pool.allocate(rmm::cuda_stream_view{first}, size);
        pool.deallocate(rmm::cuda_stream_view{first}, all, size);
        void* half = pool.allocate(rmm::cuda_stream_view{second}, size / 2);
        pool.deallocate(rmm::cuda_stream_view{second}, half, size / 2);
      } catch (std::exception const& e) {
        failure = e.what();
      }
    }};
    fresh.join();
    ASSERT_EQ(failure, "") << "repetition " << rep;
    ASSERT_EQ(logged_errors(), "") << "repetition " << rep;
  }
  EXPECT_EQ(cudaStreamSynchronize(first), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(first), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(second), cudaSuccess);
}

TEST(FreshThreads, PoolOnTheirOwnStreams)
{
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  // Small, with a maximum: streams take memory from each other's arenas, which needs events.
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, std::size_t{4} << 20, std::size_t{48} << 20};
  run_fresh_threads(pool, false);
  run_fresh_threads(pool, true);
}

TEST(FreshThreads, ArenaOnTheirOwnStreams)
{
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  rmm::mr::arena_memory_resource arena{rmm::mr::cuda_memory_resource{}, std::size_t{48} << 20};
  run_fresh_threads(arena, false);
  run_fresh_threads(arena, true);
}

}  // namespace
}  // namespace rmm::test
