// SPDX-License-Identifier: Apache-2.0
// allocate_sync / deallocate_sync reach the sub-allocator through every adaptor: memory with no
// pending work comes from its clean reserve without the host waiting for any stream (the default
// implementation would synchronize the default stream on every call).

#include "stream_gate.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace rmm::test {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

using any_resource = rmm::mr::any_device_resource;

std::vector<std::pair<std::string, std::function<any_resource(any_resource)>>> adaptors()
{
  static std::ostringstream log;
  return {
    {"statistics", [](any_resource up) { return any_resource{rmm::mr::statistics_resource_adaptor{up}}; }},
    {"logging",
     [](any_resource up) {
       return any_resource{rmm::mr::logging_resource_adaptor{up, log}};
     }},
    {"tracking", [](any_resource up) { return any_resource{rmm::mr::tracking_resource_adaptor{up}}; }},
    {"limiting",
     [](any_resource up) {
       return any_resource{rmm::mr::limiting_resource_adaptor{up, 64 * MiB}};
     }},
    {"aligned",
     [](any_resource up) {
       return any_resource{rmm::mr::aligned_resource_adaptor{up, 4096, 0}};
     }},
    {"thread_safe", [](any_resource up) { return any_resource{rmm::mr::thread_safe_resource_adaptor{up}}; }},
    {"failure_callback",
     [](any_resource up) {
       return any_resource{
         rmm::mr::failure_callback_resource_adaptor<>{up, [](std::size_t, void*) { return false; }, nullptr}};
     }},
    {"binning",
     [](any_resource up) {
       return any_resource{rmm::mr::binning_memory_resource{up, 12, 20}};
     }},
  };
}

TEST(HostOrderedCalls, ReachThePoolThroughEveryAdaptorWithoutWaitingForTheDefaultStream)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  for (auto const& [name, wrap] : adaptors()) {
    SCOPED_TRACE(name);
    rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 32 * MiB, 32 * MiB};
    auto top = wrap(pool);
    // Work on the default stream that never finishes until the gate opens: a synchronization of
    // that stream would hang the call below.
    stream_gate gate{rmm::cuda_stream_view{}};
    auto call = std::async(std::launch::async, [&top] {
      std::vector<void*> blocks;
      for (std::size_t size : {std::size_t{256}, std::size_t{4096}, MiB, 2 * MiB}) {
        blocks.push_back(top.allocate_sync(size, rmm::CUDA_ALLOCATION_ALIGNMENT));
        top.deallocate_sync(blocks.back(), size, rmm::CUDA_ALLOCATION_ALIGNMENT);
      }
      return blocks.size();
    });
    EXPECT_TRUE(returns_without_waiting(call)) << name << ": allocate_sync waited for the default stream";
    gate.open();
    EXPECT_EQ(call.get(), 4U);
    if (name != "binning") {  // binning's bins keep the chunks they took from the pool
      EXPECT_EQ(pool.statistics().allocated_bytes, 0U) << "every block came back";
    }
  }
}

}  // namespace
}  // namespace rmm::test
