// SPDX-License-Identifier: Apache-2.0
// failure_callback_resource_adaptor: the callback decides whether a failed allocation is retried.
#include <rmm/error.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

using rmm::mr::failure_callback_resource_adaptor;

struct spill_state {
  rmm::mr::limiting_resource_adaptor* upstream;
  std::vector<void*> cache;  ///< blocks the callback may free to make room
  std::vector<std::size_t> requests_seen;
};

TEST(FailureCallbackAdaptor, RetriesWhileTheCallbackFreesMemory)
{
  rmm::mr::limiting_resource_adaptor limited{rmm::mr::cuda_memory_resource{}, 4096};
  spill_state state{&limited, {}, {}};
  for (int i = 0; i < 4; ++i) { state.cache.push_back(limited.allocate_sync(1024)); }
  failure_callback_resource_adaptor<> mr{limited,
                                         [](std::size_t bytes, void* arg) {
                                           auto* s = static_cast<spill_state*>(arg);
                                           s->requests_seen.push_back(bytes);
                                           if (s->cache.empty()) { return false; }
                                           s->upstream->deallocate_sync(s->cache.back(), 1024);
                                           s->cache.pop_back();
                                           return true;
                                         },
                                         &state};
  void* p = mr.allocate_sync(3072);  // needs three cached blocks freed
  EXPECT_EQ(state.requests_seen, (std::vector<std::size_t>{3072, 3072, 3072}));
  EXPECT_EQ(state.cache.size(), 1U);
  EXPECT_THROW((void)mr.allocate_sync(2048), rmm::out_of_memory) << "one block to spill is not enough";
  EXPECT_EQ(state.requests_seen.size(), 5U) << "called once more with room, once more to give up";
  mr.deallocate_sync(p, 3072);
  EXPECT_EQ(limited.get_allocated_bytes(), 0U);
}

TEST(FailureCallbackAdaptor, OtherExceptionsPassThroughWithoutACall)
{
  int calls{0};
  rmm::mr::callback_memory_resource failing{
    [](std::size_t, rmm::cuda_stream_view, void*) -> void* { throw rmm::bad_alloc{"not out of memory"}; },
    [](void*, std::size_t, rmm::cuda_stream_view, void*) {}};
  failure_callback_resource_adaptor<> mr{failing,
                                         [](std::size_t, void* arg) {
                                           ++*static_cast<int*>(arg);
                                           return true;
                                         },
                                         &calls};
  EXPECT_THROW((void)mr.allocate_sync(256), rmm::bad_alloc);
  EXPECT_EQ(calls, 0);

  failure_callback_resource_adaptor<rmm::bad_alloc> catches_bad_alloc{
    failing, [](std::size_t, void* arg) { return ++*static_cast<int*>(arg) < 3; }, &calls};
  EXPECT_THROW((void)catches_bad_alloc.allocate_sync(256), rmm::bad_alloc);
  EXPECT_EQ(calls, 3);
}

TEST(FailureCallbackAdaptor, AnEmptyCallbackIsRefused)
{
  EXPECT_THROW((failure_callback_resource_adaptor<>{rmm::mr::cuda_memory_resource{}, {}, nullptr}), rmm::logic_error);
}

}  // namespace
