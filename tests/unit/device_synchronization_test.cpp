// SPDX-License-Identifier: Apache-2.0
// The device-synchronization check: a pool that would synchronize the device to take back what
// other streams freed asks the check first, and leaves the memory where it is when told no. The
// shim says no while a stream captures: the synchronization would end the capture as invalid.

#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/device_synchronization.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace rmm::test {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

struct answers {
  bool allow{false};
  int calls{0};
  int device{-1};

  static bool check(void* self, rmm::cuda_device_id device) noexcept
  {
    auto& a = *static_cast<answers*>(self);
    ++a.calls;
    a.device = device.value();
    return a.allow;
  }
};

struct check_for_test {
  explicit check_for_test(answers& a) { rmm::mr::set_device_synchronization_check(answers::check, &a); }
  ~check_for_test() { rmm::mr::set_device_synchronization_check(nullptr, nullptr); }
  check_for_test(check_for_test const&)            = delete;
  check_for_test& operator=(check_for_test const&) = delete;
};

/// Releases a pool whose memory another stream freed, while `capturing` captures in the relaxed
/// mode; returns how the capture ended.
cudaError_t release_during_capture(bool allow, answers& a)
{
  cudaStream_t freeing{};
  cudaStream_t capturing{};
  EXPECT_EQ(cudaStreamCreateWithFlags(&freeing, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_EQ(cudaStreamCreateWithFlags(&capturing, cudaStreamNonBlocking), cudaSuccess);
  cudaError_t ended{};
  {
    rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, 8 * MiB, 8 * MiB};
    void* p = pool.allocate(rmm::cuda_stream_view{freeing}, 4 * MiB);
    pool.deallocate(rmm::cuda_stream_view{freeing}, p, 4 * MiB);  // in the freeing stream's arena
    EXPECT_EQ(cudaStreamSynchronize(freeing), cudaSuccess);
    a.allow = allow;
    check_for_test const check{a};
    EXPECT_EQ(cudaStreamBeginCapture(capturing, cudaStreamCaptureModeRelaxed), cudaSuccess);
    try {
      (void)pool.release();
    } catch (rmm::cuda_error const&) {  // the synchronization refused, when it was made
    }
    cudaGraph_t graph{};
    ended = cudaStreamEndCapture(capturing, &graph);
    if (graph != nullptr) { (void)cudaGraphDestroy(graph); }
    (void)cudaGetLastError();
  }
  EXPECT_EQ(cudaStreamDestroy(freeing), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(capturing), cudaSuccess);
  return ended;
}

TEST(DeviceSynchronizationCheck, ToldNoThePoolDoesNotSynchronizeTheDevice)
{
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  answers a;
  EXPECT_EQ(release_during_capture(false, a), cudaSuccess) << "the capture survived";
  EXPECT_GE(a.calls, 1);
  EXPECT_EQ(a.device, 0);
}

TEST(DeviceSynchronizationCheck, AllowedThePoolSynchronizesWhichEndsACapture)
{
  // What the check prevents: a device synchronization ends every capture as invalid.
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  answers a;
  EXPECT_EQ(release_during_capture(true, a), cudaErrorStreamCaptureInvalidated);
  EXPECT_GE(a.calls, 1);
}

}  // namespace
}  // namespace rmm::test
