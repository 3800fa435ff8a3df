// thread_safe_resource_adaptor: an upstream that must never be entered twice at once.
#include <rmm/error.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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
      for (int i = 0; i < 50; ++i) { mr.deallocate_sync(mr.allocate_sync(256), 256); }
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

}  // namespace
