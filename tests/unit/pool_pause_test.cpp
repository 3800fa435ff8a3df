// SPDX-License-Identifier: Apache-2.0
// Pausing a pool: its device memory goes back to the device while every block keeps its address,
// and resume maps memory there again with the contents each allocated byte had. Free memory is
// neither copied nor kept. A resume the device cannot serve changes nothing and can be repeated;
// a pool that does not grow in one address range refuses to pause.

#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace rmm::test {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

rmm::mr::pool_memory_resource region_pool(std::size_t initial = 0)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, initial, std::nullopt,
                                       rmm::mr::pool_growth::virtual_memory};
}

std::size_t device_free_bytes()
{
  std::size_t free  = 0;
  std::size_t total = 0;
  RMM_CUDA_TRY(cudaMemGetInfo(&free, &total));
  return free;
}

/// A block and the bytes written to it.
struct written_block {
  void* ptr;
  std::vector<unsigned char> contents;
};

written_block write_random(void* ptr, std::size_t bytes, std::mt19937& random)
{
  written_block block{ptr, std::vector<unsigned char>(bytes)};
  for (auto& b : block.contents) { b = static_cast<unsigned char>(random()); }
  RMM_CUDA_TRY(cudaMemcpy(ptr, block.contents.data(), bytes, cudaMemcpyHostToDevice));
  return block;
}

/// Whether the block holds what was written to it.
bool still_holds(written_block const& block)
{
  std::vector<unsigned char> now(block.contents.size());
  if (cudaMemcpy(now.data(), block.ptr, now.size(), cudaMemcpyDeviceToHost) != cudaSuccess) { return false; }
  return now == block.contents;
}

TEST(PoolPause, ThePoolGivesItsMemoryBackAndResumesWithEveryAllocatedByteAsItWas)
{
  auto pool = region_pool();
  ASSERT_TRUE(pool.can_pause());
  std::mt19937 random{7};
  // Blocks of odd sizes with freed ones between them: free ranges within and across granules.
  std::vector<written_block> kept;
  std::vector<std::pair<void*, std::size_t>> to_free;
  for (int i = 0; i < 24; ++i) {
    auto const bytes = (std::size_t{1} + static_cast<std::size_t>(random() % 3000)) * 1024;
    void* ptr        = pool.allocate_sync(bytes);
    if (i % 3 == 1) {
      to_free.emplace_back(ptr, bytes);
    } else {
      kept.push_back(write_random(ptr, bytes, random));
    }
  }
  for (auto const& [ptr, bytes] : to_free) { pool.deallocate_sync(ptr, bytes); }
  auto const before   = pool.statistics();
  auto const free_was = device_free_bytes();

  auto const paused = pool.pause_device_memory(false);
  EXPECT_TRUE(pool.paused());
  EXPECT_EQ(paused.device_bytes, before.reserved_bytes) << "all the pool's device memory goes back";
  EXPECT_EQ(paused.saved_bytes, before.allocated_bytes) << "only allocated bytes are copied, never free ones";
  EXPECT_EQ(device_free_bytes(), free_was + before.reserved_bytes) << "the device has the memory again";

  pool.resume_device_memory();
  EXPECT_FALSE(pool.paused());
  EXPECT_EQ(device_free_bytes(), free_was);
  for (auto const& block : kept) { EXPECT_TRUE(still_holds(block)) << "a block's contents at " << block.ptr; }
  // The pool works as before: what was free is reused, the rest grows as usual.
  auto const after = pool.statistics();
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  void* more = pool.allocate_sync(to_free.front().second);
  EXPECT_EQ(pool.statistics().reserved_bytes, before.reserved_bytes) << "a freed block's room serves again";
  pool.deallocate_sync(more, to_free.front().second);
  for (auto const& block : kept) { pool.deallocate_sync(block.ptr, block.contents.size()); }
}

/// A block filled with a pattern of its own (cheap to make at hundreds of MiB).
written_block write_pattern(void* ptr, std::size_t bytes, std::uint64_t seed)
{
  written_block block{ptr, std::vector<unsigned char>(bytes)};
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& b : block.contents) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<unsigned char>(x);
  }
  RMM_CUDA_TRY(cudaMemcpy(ptr, block.contents.data(), bytes, cudaMemcpyHostToDevice));
  return block;
}

/// Blocks of three sizes (one not a whole number of granules), each with a pattern of its own.
std::vector<written_block> write_blocks_of_three_sizes(rmm::mr::pool_memory_resource& pool, std::uint64_t& seed)
{
  std::vector<written_block> blocks;
  for (auto const bytes : {20 * MiB + 512, 3 * MiB, 40 * MiB}) {
    blocks.push_back(write_pattern(pool.allocate_sync(bytes), bytes, seed++));
  }
  return blocks;
}

TEST(PoolPause, ContentsLargerThanTheStagingComeBackWhole)
{
  // Blocks larger than one staging buffer, and more of them in all than every staging buffer
  // holds at once: each buffer is filled and emptied many times, both ways.
  auto pool = region_pool();
  std::vector<written_block> kept;
  std::uint64_t seed = 1;
  for (auto const bytes : {40 * MiB + 3 * 1024, 7 * MiB, 100 * MiB + 256, 1024UL, 150 * MiB, 33 * MiB + 512}) {
    kept.push_back(write_pattern(pool.allocate_sync(bytes), bytes, seed++));
  }
  auto const paused = pool.pause_device_memory(false);
  EXPECT_TRUE(paused.staged) << "the contents went through page-locked staging";
  EXPECT_EQ(paused.saved_bytes, pool.statistics().allocated_bytes);
  pool.resume_device_memory();
  for (auto const& block : kept) { EXPECT_TRUE(still_holds(block)) << "a block's contents at " << block.ptr; }
  for (auto const& block : kept) { pool.deallocate_sync(block.ptr, block.contents.size()); }
}

TEST(PoolPause, HostMemoryKeptByAResumeHoldsTheNextPausesNewerContents)
{
  auto pool          = region_pool();
  std::uint64_t seed = 1;
  auto blocks        = write_blocks_of_three_sizes(pool, seed);
  auto const first   = pool.pause_device_memory(false);
  pool.resume_device_memory(true);
  EXPECT_EQ(pool.kept_host_bytes(), first.saved_bytes) << "the host memory of the contents stays";
  for (auto& block : blocks) { block = write_pattern(block.ptr, block.contents.size(), seed++); }
  (void)pool.pause_device_memory(false);
  EXPECT_EQ(pool.kept_host_bytes(), 0U) << "the pause holds its contents in the kept memory";
  pool.resume_device_memory(true);
  for (auto const& block : blocks) { EXPECT_TRUE(still_holds(block)) << "the newer contents at " << block.ptr; }
  EXPECT_EQ(pool.kept_host_bytes(), first.saved_bytes);

  // Contents larger than the kept memory take memory of their own, which is kept in its place.
  blocks.push_back(write_pattern(pool.allocate_sync(10 * MiB), 10 * MiB, seed++));
  auto const larger = pool.pause_device_memory(false);
  EXPECT_GT(larger.saved_bytes, first.saved_bytes);
  pool.resume_device_memory(true);
  EXPECT_EQ(pool.kept_host_bytes(), larger.saved_bytes);
  for (auto const& block : blocks) { EXPECT_TRUE(still_holds(block)) << "a block's contents at " << block.ptr; }

  auto const staging = pool.staging_host_bytes();
  EXPECT_EQ(pool.release_kept_host_memory(), larger.saved_bytes + staging);
  EXPECT_EQ(pool.kept_host_bytes(), 0U);
  EXPECT_EQ(pool.release_kept_host_memory(), 0U) << "nothing is left to give back";
  for (auto const& block : blocks) { pool.deallocate_sync(block.ptr, block.contents.size()); }
}

TEST(PoolPause, ReleaseGivesBackTheStagingAndTheNextPauseMakesItAgain)
{
  auto pool          = region_pool();
  std::uint64_t seed = 1;
  auto blocks        = write_blocks_of_three_sizes(pool, seed);
  EXPECT_EQ(pool.staging_host_bytes(), 0U) << "no staging before the first pause";
  auto const first = pool.pause_device_memory(false);
  ASSERT_TRUE(first.staged) << "the contents went through page-locked staging";
  auto const staging = pool.staging_host_bytes();
  EXPECT_GT(staging, 0U);
  EXPECT_EQ(staging % (2 * 16 * MiB), 0U) << "two 16 MiB buffers a host thread";
  pool.resume_device_memory(true);
  EXPECT_EQ(pool.staging_host_bytes(), staging) << "held for the next pause";

  EXPECT_EQ(pool.release_kept_host_memory(), first.saved_bytes + staging);
  EXPECT_EQ(pool.staging_host_bytes(), 0U);

  for (auto& block : blocks) { block = write_pattern(block.ptr, block.contents.size(), seed++); }
  auto const again = pool.pause_device_memory(false);
  EXPECT_TRUE(again.staged) << "a pause after the release stages its copies through new buffers";
  EXPECT_EQ(pool.staging_host_bytes(), staging);
  pool.resume_device_memory();
  for (auto const& block : blocks) { EXPECT_TRUE(still_holds(block)) << "the newer contents at " << block.ptr; }
  for (auto const& block : blocks) { pool.deallocate_sync(block.ptr, block.contents.size()); }
}

TEST(PoolPause, HostMemoryGivenBackLazilyServesTheNextPausesNewerContents)
{
  auto pool          = region_pool();
  std::uint64_t seed = 1;
  auto blocks        = write_blocks_of_three_sizes(pool, seed);
  auto const first   = pool.pause_device_memory(false);
  pool.resume_device_memory();  // not held: given back lazily, the system may take the pages
  EXPECT_EQ(pool.kept_host_bytes(), first.saved_bytes) << "the host memory stays until the system needs it";
  for (int round = 0; round < 3; ++round) {
    for (auto& block : blocks) { block = write_pattern(block.ptr, block.contents.size(), seed++); }
    (void)pool.pause_device_memory(false);
    EXPECT_EQ(pool.kept_host_bytes(), 0U) << "the pause holds its contents in the memory given back";
    pool.resume_device_memory();
    for (auto const& block : blocks) { EXPECT_TRUE(still_holds(block)) << "the newer contents at " << block.ptr; }
  }
  auto const staging = pool.staging_host_bytes();
  EXPECT_EQ(pool.release_kept_host_memory(), first.saved_bytes + staging);
  EXPECT_EQ(pool.kept_host_bytes(), 0U);
  for (auto const& block : blocks) { pool.deallocate_sync(block.ptr, block.contents.size()); }
}

TEST(PoolPause, DiscardingKeepsTheAddressesButNoContents)
{
  auto pool         = region_pool();
  void* ptr         = pool.allocate_sync(3 * MiB);
  auto const paused = pool.pause_device_memory(true);
  EXPECT_EQ(paused.saved_bytes, 0U);
  EXPECT_GT(paused.device_bytes, 0U);
  pool.resume_device_memory();
  // The block is usable where it was.
  std::mt19937 random{3};
  auto const block = write_random(ptr, 3 * MiB, random);
  EXPECT_TRUE(still_holds(block));
  pool.deallocate_sync(ptr, 3 * MiB);
}

TEST(PoolPause, AResumeTheDeviceCannotServeChangesNothingAndCanBeRepeated)
{
  auto pool = region_pool(64 * MiB);
  std::mt19937 random{11};
  auto const block = write_random(pool.allocate_sync(5 * MiB), 5 * MiB, random);
  (void)pool.pause_device_memory(false);
  // Another user takes the device's memory meanwhile: all but half of what the pool held.
  void* taken = nullptr;
  ASSERT_EQ(cudaMalloc(&taken, device_free_bytes() - 32 * MiB), cudaSuccess);
  try {
    pool.resume_device_memory();
    ADD_FAILURE() << "the resume cannot have the pool's 64 MiB back";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_NE(std::string{e.what()}.find("missing"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(pool.paused()) << "a failed resume leaves the pool paused";
  ASSERT_EQ(cudaFree(taken), cudaSuccess);
  pool.resume_device_memory();
  EXPECT_TRUE(still_holds(block)) << "the contents waited in host memory";
  pool.deallocate_sync(block.ptr, block.contents.size());
}

TEST(PoolPause, PausingTwiceOrResumingARunningPoolIsRefused)
{
  auto pool = region_pool(4 * MiB);
  EXPECT_THROW(pool.resume_device_memory(), rmm::logic_error);
  (void)pool.pause_device_memory(false);
  EXPECT_THROW((void)pool.pause_device_memory(false), rmm::logic_error);
  pool.resume_device_memory();
}

TEST(PoolPause, APoolGrowingInSeparateAllocationsCannotPause)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 4 * MiB, std::nullopt,
                                     rmm::mr::pool_growth::upstream};
  EXPECT_FALSE(pool.can_pause());
  try {
    (void)pool.pause_device_memory(false);
    ADD_FAILURE() << "a pool over separate cudaMalloc allocations cannot give them back and keep the addresses";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("cannot pause"), std::string::npos) << e.what();
  }
  rmm::mr::fixed_size_memory_resource fixed{rmm::mr::cuda_memory_resource{}, 1 * MiB};
  EXPECT_FALSE(fixed.can_pause());
}

}  // namespace
}  // namespace rmm::test
