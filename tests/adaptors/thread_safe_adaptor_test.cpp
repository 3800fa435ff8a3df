// SPDX-License-Identifier: Apache-2.0
// thread_safe_resource_adaptor: an upstream that must never be entered twice at once.
#include <rmm/error.hpp>
#include <rmm/mr/before_growth.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>
#include <vector>

namespace {

/// An upstream that records whether two calls ever overlapped.
struct overlap_detector {
  rmm::mr::cuda_memory_resource cuda;
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};

  void enter()
  {
    if (inside.fetch_add(1) != 0) { ++overlaps; }
    std::this_thread::sleep_for(std::chrono::microseconds{20});  // widen the window
  }
  void leave() { inside.fetch_sub(1); }
};

rmm::mr::callback_memory_resource detecting_upstream(overlap_detector& detector)
{
  return rmm::mr::callback_memory_resource{[](std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
                                             auto* d = static_cast<overlap_detector*>(arg);
                                             d->enter();
                                             void* p = d->cuda.allocate(stream, bytes);
                                             d->leave();
                                             return p;
                                           },
                                           [](void* ptr, std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
                                             auto* d = static_cast<overlap_detector*>(arg);
                                             d->enter();
                                             d->cuda.deallocate(stream, ptr, bytes);
                                             d->leave();
                                           },
                                           &detector, &detector};
}

void hammer(rmm::device_async_resource_ref mr)
{
  std::vector<std::thread> workers;
  for (int t = 0; t < 8; ++t) {
    workers.emplace_back([mr]() mutable {
      for (int i = 0; i < 50; ++i) {
        mr.deallocate_sync(mr.allocate_sync(256, rmm::CUDA_ALLOCATION_ALIGNMENT), 256, rmm::CUDA_ALLOCATION_ALIGNMENT);
      }
    });
  }
  for (auto& w : workers) { w.join(); }
}

TEST(ThreadSafeAdaptor, NeverEntersItsUpstreamTwiceAtOnce)
{
  overlap_detector unguarded;
  auto raw = detecting_upstream(unguarded);
  hammer(raw);
  EXPECT_GT(unguarded.overlaps.load(), 0) << "the detector must see overlaps without the adaptor";

  overlap_detector guarded;
  rmm::mr::thread_safe_resource_adaptor mr{detecting_upstream(guarded)};
  hammer(mr);
  EXPECT_EQ(guarded.overlaps.load(), 0);
}

/// Frees one block through the top of the stack each time the pool below would grow.
struct free_through_top {
  rmm::mr::thread_safe_resource_adaptor* top{};
  std::vector<void*> blocks;
  static bool give_one(void* self, rmm::cuda_device_id, std::size_t) noexcept
  {
    auto& f = *static_cast<free_through_top*>(self);
    if (f.blocks.empty()) { return false; }
    f.top->deallocate_sync(f.blocks.back(), 2 << 20);
    f.blocks.pop_back();
    return true;
  }
};

TEST(ThreadSafeAdaptor, AHookThatFreesThroughItWhileThePoolBelowGrowsDoesNotDeadlock)
{
  // The shim's situation: its before-growth hook hands frees that waited for the device back
  // through the top of the stack, while the allocating thread holds the adaptor's lock.
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 8 << 20};
  rmm::mr::thread_safe_resource_adaptor top{pool};
  free_through_top hook{&top, {}};
  for (int i = 0; i < 4; ++i) { hook.blocks.push_back(top.allocate_sync(2 << 20)); }
  rmm::mr::set_before_growth_callback(free_through_top::give_one, &hook);
  auto done = std::async(std::launch::async, [&] {
    void* p = top.allocate_sync(2 << 20);  // the pool is full: its hook frees a block first
    top.deallocate_sync(p, 2 << 20);
  });
  if (done.wait_for(std::chrono::seconds{30}) != std::future_status::ready) {
    ADD_FAILURE() << "the allocation did not return in 30 s: the hook's free waits for the lock its thread holds";
    std::fflush(stdout);
    std::_Exit(1);  // the thread cannot be joined
  }
  rmm::mr::set_before_growth_callback(nullptr, nullptr);
  EXPECT_EQ(hook.blocks.size(), 3U) << "the hook gave back one block and the pool did not grow";
  EXPECT_EQ(pool.pool_size(), std::size_t{8} << 20);
  for (void* b : hook.blocks) { top.deallocate_sync(b, 2 << 20); }
}

}  // namespace
