// SPDX-License-Identifier: Apache-2.0
// The before-growth hook: a pool that cannot serve a request asks the hook for memory before it
// grows, again and again while the hook gives some back and the request still does not fit, and
// stops asking as soon as it fits. The shim gives back waiting frees one epoch at a time this way.

#include <rmm/mr/before_growth.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace rmm::test {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

/// Blocks the program has freed but the hook still holds back; each call gives one back, lowest
/// address first.
struct held_back {
  rmm::mr::pool_memory_resource* pool{};
  std::vector<void*> blocks;
  std::size_t block_bytes{};
  int calls{0};

  cudaStream_t stream{};  // where a block goes back: the legacy stream's order, or clean (null)

  static bool give_one(void* self, rmm::cuda_device_id, std::size_t) noexcept
  {
    auto& h = *static_cast<held_back*>(self);
    ++h.calls;
    if (h.blocks.empty()) { return false; }
    if (h.stream == nullptr) {
      h.pool->deallocate_sync(h.blocks.front(), h.block_bytes);
    } else {
      h.pool->deallocate(rmm::cuda_stream_view{h.stream}, h.blocks.front(), h.block_bytes);
    }
    h.blocks.erase(h.blocks.begin());
    return true;
  }
};

/// Sets the process-wide hook for one test.
struct hook_for_test {
  explicit hook_for_test(held_back& h) { rmm::mr::set_before_growth_callback(held_back::give_one, &h); }
  ~hook_for_test() { rmm::mr::set_before_growth_callback(nullptr, nullptr); }
  hook_for_test(hook_for_test const&)            = delete;
  hook_for_test& operator=(hook_for_test const&) = delete;
};

/// A pool of 8 MiB, all of it in four 2 MiB blocks that the hook holds back.
held_back fill(rmm::mr::pool_memory_resource& pool)
{
  held_back h{&pool, {}, 2 * MiB};
  for (int i = 0; i < 4; ++i) { h.blocks.push_back(pool.allocate_sync(h.block_bytes)); }
  std::sort(h.blocks.begin(), h.blocks.end());
  return h;
}

TEST(BeforeGrowth, ThePoolAsksAgainUntilTheRequestFitsAndNoFurther)
{
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 8 * MiB};
  auto h = fill(pool);
  hook_for_test const hook{h};
  void* p = pool.allocate_sync(4 * MiB);  // two adjacent blocks: fits after the second call
  EXPECT_EQ(h.calls, 2);
  EXPECT_EQ(h.blocks.size(), 2U) << "the hook was asked for more than the request needed";
  EXPECT_EQ(pool.pool_size(), 8 * MiB) << "the pool grew although the hook's memory served";
  pool.deallocate_sync(p, 4 * MiB);
  for (auto* b : h.blocks) { pool.deallocate_sync(b, h.block_bytes); }
}

TEST(BeforeGrowth, MemoryGivenBackInTheRequestingStreamsOrderServesThatStream)
{
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 8 * MiB};
  auto h   = fill(pool);
  h.stream = cudaStreamLegacy;
  hook_for_test const hook{h};
  void* p = pool.allocate(rmm::cuda_stream_view{cudaStreamLegacy}, 4 * MiB);
  EXPECT_EQ(h.calls, 2);
  EXPECT_EQ(pool.pool_size(), 8 * MiB) << "the pool grew although the hook's memory served";
  pool.deallocate(rmm::cuda_stream_view{cudaStreamLegacy}, p, 4 * MiB);
  for (auto* b : h.blocks) { pool.deallocate(rmm::cuda_stream_view{cudaStreamLegacy}, b, h.block_bytes); }
  ASSERT_EQ(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
}

TEST(BeforeGrowth, ThePoolGrowsOnceTheHookHasNothingLeft)
{
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 8 * MiB};
  auto h = fill(pool);
  hook_for_test const hook{h};
  void* p = pool.allocate_sync(16 * MiB);  // more than all the held-back blocks together
  EXPECT_EQ(h.calls, 5) << "four blocks given back one by one, then nothing";
  EXPECT_TRUE(h.blocks.empty());
  EXPECT_GE(pool.pool_size(), 16 * MiB);
  pool.deallocate_sync(p, 16 * MiB);
}

}  // namespace
}  // namespace rmm::test
