// SPDX-License-Identifier: Apache-2.0
// A pool growing by remapping moves idle free granules from the middle of its address range to
// the end before it maps new memory: what fragmentation costs is addresses, not device memory.
// Granules with queued work are moved only once that work is done. The plain virtual-memory pool
// moves nothing. A pool moves at most four bytes for each byte it mapped, then maps instead.

#include "backend.hpp"
#include "stream_gate.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <future>
#include <vector>

namespace rmm::test {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

rmm::mr::pool_memory_resource remapping_pool(rmm::mr::pool_growth growth = rmm::mr::pool_growth::remapping)
{
  return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0, std::nullopt, growth};
}

/// Fills [ptr, ptr + bytes) and reads it back: the memory is mapped and accessible.
void expect_usable(void* ptr, std::size_t bytes)
{
  RMM_CUDA_TRY(cudaMemset(ptr, 0x5a, bytes));
  std::vector<unsigned char> host(bytes);
  RMM_CUDA_TRY(cudaMemcpy(host.data(), ptr, bytes, cudaMemcpyDefault));
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](unsigned char v) { return v == 0x5a; }));
}

TEST(PoolRecycling, IdleGranulesInTheMiddleMoveToTheEndInsteadOfNewMemory)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto pool = remapping_pool();
  ASSERT_TRUE(pool.grows_contiguously());
  // Each request maps exactly what it needs (a small pool grows by at least a 2 MiB granule).
  void* a = pool.allocate_sync(8 * MiB);
  void* b = pool.allocate_sync(8 * MiB);
  pool.deallocate_sync(a, 8 * MiB);  // free and idle, between a and the end: 4 granules
  auto const before = pool.pool_size();
  // 12 MiB fits nowhere. Mapped anew it would cost 12 MiB; with a's granules moved next to the
  // end, only the 4 MiB they do not cover.
  void* c = pool.allocate_sync(12 * MiB);
  EXPECT_EQ(pool.pool_size() - before, 4 * MiB);
  EXPECT_EQ(pool.statistics().moved_bytes, 8 * MiB);
  EXPECT_GE(reinterpret_cast<std::uintptr_t>(c), reinterpret_cast<std::uintptr_t>(b) + 8 * MiB);
  expect_usable(c, 12 * MiB);
  expect_usable(b, 8 * MiB);
  pool.deallocate_sync(c, 12 * MiB);
  pool.deallocate_sync(b, 8 * MiB);
  // The memory left is whole again: one request of all of it needs nothing new.
  auto const held = pool.pool_size();
  void* all       = pool.allocate_sync(held);
  EXPECT_EQ(pool.pool_size(), held);
  expect_usable(all, held);
  pool.deallocate_sync(all, held);
}

TEST(PoolRecycling, APlainVirtualMemoryPoolMapsNewMemoryInstead)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto pool = remapping_pool(rmm::mr::pool_growth::virtual_memory);
  void* a   = pool.allocate_sync(8 * MiB);
  void* b   = pool.allocate_sync(8 * MiB);
  pool.deallocate_sync(a, 8 * MiB);
  auto const before = pool.pool_size();
  void* c           = pool.allocate_sync(12 * MiB);
  EXPECT_EQ(pool.pool_size() - before, 12 * MiB);
  EXPECT_EQ(pool.statistics().moved_bytes, 0U);
  expect_usable(a, 8 * MiB);  // still mapped where it was
  pool.deallocate_sync(c, 12 * MiB);
  pool.deallocate_sync(b, 8 * MiB);
}

TEST(PoolRecycling, AStreamsOwnGranulesMoveOnlyOnceItsQueuedWorkOnThemIsDone)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto pool = remapping_pool();
  rmm::cuda_stream stream;
  void* a           = pool.allocate(stream, 8 * MiB);
  void* b           = pool.allocate(stream, 8 * MiB);
  auto const before = pool.pool_size();
  std::future<void*> c;
  {
    stream_gate gate{stream};  // destroyed (opened) before the future, which waits for the call
    // Work on a is queued, then a is freed on the same stream: reusing it on the stream is fine,
    // unmapping it is not until the work has run.
    RMM_CUDA_TRY(cudaMemsetAsync(a, 1, 8 * MiB, stream.value()));
    pool.deallocate(stream, a, 8 * MiB);
    c = std::async(std::launch::async, [&] { return pool.allocate(stream, 12 * MiB); });
    EXPECT_NE(settle(c), call_state::returned) << "moved a's granules while the memset on them was still queued";
    gate.open();
  }
  void* got = c.get();
  // a's granules moved once the memset ran (unmapping them earlier aborts the emulator).
  EXPECT_EQ(pool.pool_size() - before, 4 * MiB);
  stream.synchronize();
  expect_usable(got, 12 * MiB);
  pool.deallocate(stream, got, 12 * MiB);
  pool.deallocate(stream, b, 8 * MiB);
  stream.synchronize();
}

TEST(PoolRecycling, APoolMovesAtMostFourTimesWhatItMappedThenMapsInstead)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  auto pool = remapping_pool();
  // Each round leaves a 32 MiB hole behind a 2 MiB block that stays, then asks for 34 MiB, which
  // fits nowhere: moving the hole's granules to the end serves it with 2 MiB mapped. Moving at
  // every round would move eight times what the pool maps; the allowance stops it first.
  std::vector<void*> pins;
  std::size_t served_by_moving = 0;
  constexpr int rounds         = 64;
  for (int round = 0; round < rounds; ++round) {
    void* hole = pool.allocate_sync(32 * MiB);
    pins.push_back(pool.allocate_sync(2 * MiB));
    pool.deallocate_sync(hole, 32 * MiB);
    auto const moved_before = pool.statistics().moved_bytes;
    void* big               = pool.allocate_sync(34 * MiB);
    if (pool.statistics().moved_bytes > moved_before) { ++served_by_moving; }
    pool.deallocate_sync(big, 34 * MiB);
  }
  auto const stats = pool.statistics();
  EXPECT_GT(served_by_moving, 0U);
  EXPECT_LT(served_by_moving, static_cast<std::size_t>(rounds)) << "the allowance never ran out";
  EXPECT_GT(stats.moved_bytes, stats.peak_reserved_bytes) << "moving served many rounds";
  // Nothing was released, so what the pool mapped is what it holds.
  EXPECT_LE(stats.moved_bytes, 4 * stats.peak_reserved_bytes);
  for (void* p : pins) { pool.deallocate_sync(p, 2 * MiB); }
}

}  // namespace
}  // namespace rmm::test
