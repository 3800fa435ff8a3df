// SPDX-License-Identifier: Apache-2.0
// Stream identity (mr/detail/stream_identity.hpp): the streams the library creates are asked for
// their id once and remembered until just before they are destroyed; any other stream is asked
// every time. A handle the driver hands out again must never carry a destroyed stream's id.

#include "mr/detail/stream_identity.hpp"

#include "program_streams.hpp"
#include "stream_gate.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <future>
#include <optional>
#include <thread>
#include <vector>

namespace rmm::test {
namespace {

using rmm::mr::detail::remembered_id;
using rmm::mr::detail::stream_id;

std::uint64_t driver_id(cudaStream_t stream)
{
  unsigned long long id = 0;
  RMM_CUDA_TRY(cudaStreamGetId(stream, &id));
  return id;
}

int current_device() { return rmm::get_current_cuda_device().value(); }

TEST(StreamIdentity, ALibraryStreamIsRememberedWithItsDriverIdUntilItIsDestroyed)
{
  rmm::cuda_stream another;  // still remembered after the first is forgotten: the caches are read
  cudaStream_t handle{};
  {
    rmm::cuda_stream stream{rmm::cuda_stream::flags::non_blocking};
    handle = stream.value();
    ASSERT_EQ(remembered_id(handle), driver_id(handle));
    EXPECT_EQ(stream_id(handle, current_device()), driver_id(handle));
  }
  EXPECT_EQ(remembered_id(handle), std::nullopt);
}

TEST(StreamIdentity, AStreamTheProgramCreatedIsNotRemembered)
{
  program_streams program;
  auto const before_any = program.create();
  EXPECT_EQ(remembered_id(before_any), std::nullopt);
  rmm::cuda_stream remembered_one;  // something is remembered: the lookup is not skipped
  std::vector<cudaStream_t> streams{before_any};
  for (int i = 0; i < 16; ++i) { streams.push_back(program.create()); }
  for (int round = 0; round < 2; ++round) {  // the second round from the thread's cached answers
    for (auto s : streams) {
      EXPECT_EQ(remembered_id(s), std::nullopt);
      EXPECT_EQ(stream_id(s, current_device()), driver_id(s));
    }
  }
  EXPECT_EQ(remembered_id(remembered_one.value()), driver_id(remembered_one.value()));
}

TEST(StreamIdentity, AMovedOverStreamIsForgotten)
{
  rmm::cuda_stream kept;
  rmm::cuda_stream replaced;
  auto const old_handle  = replaced.value();
  auto const kept_handle = kept.value();
  replaced               = std::move(kept);
  EXPECT_EQ(remembered_id(old_handle), std::nullopt);
  EXPECT_EQ(remembered_id(kept_handle), driver_id(kept_handle));
}

// Threads asked for the library stream's id (and cached it) before the stream was destroyed and
// the driver handed its handle to a stream the program created: the new stream's id comes back,
// on the thread that destroyed it and on a thread that lived through it.
TEST(StreamIdentity, AHandleReusedAfterALibraryStreamIsDestroyedNamesTheNewStream)
{
  std::optional<scoped_emulator_knob> recycle_handles;
  if (can_observe_streams()) { recycle_handles.emplace("RMM_EMU_REUSE_STREAM_HANDLES", "1"); }
  rmm::cuda_stream another;  // still remembered after the first is forgotten: the caches are read
  std::optional<rmm::cuda_stream> library_stream{std::in_place, rmm::cuda_stream::flags::non_blocking};
  auto const handle = library_stream->value();
  auto const device = current_device();
  auto const old_id = stream_id(handle, device);

  std::promise<std::uint64_t> seen_before;
  std::promise<bool> reused_now;  // false: the handle names no stream, nothing to ask
  std::promise<std::uint64_t> seen_after;
  std::thread worker{[&, handle, device] {
    seen_before.set_value(stream_id(handle, device));
    seen_after.set_value(reused_now.get_future().get() ? stream_id(handle, device) : 0);
  }};
  EXPECT_EQ(seen_before.get_future().get(), old_id);
  library_stream.reset();

  program_streams program;
  auto const reused = program.create_until(handle);
  reused_now.set_value(reused == handle);
  auto const on_worker = seen_after.get_future().get();
  worker.join();
  if (can_observe_streams()) { ASSERT_EQ(reused, handle) << "the emulator did not recycle the handle"; }
  if (reused != handle) {
    GTEST_SKIP() << "not exercised: the driver did not hand out the destroyed stream's handle again";
  }
  auto const new_id = driver_id(reused);
  ASSERT_NE(new_id, old_id);
  EXPECT_EQ(stream_id(reused, device), new_id);
  EXPECT_EQ(on_worker, new_id);
}

// The reverse: the thread saw the program's stream (not remembered) before a library stream got
// its handle.
TEST(StreamIdentity, AHandleReusedByALibraryStreamNamesTheLibraryStream)
{
  std::optional<scoped_emulator_knob> recycle_handles;
  if (can_observe_streams()) { recycle_handles.emplace("RMM_EMU_REUSE_STREAM_HANDLES", "1"); }
  rmm::cuda_stream remembered_one;
  cudaStream_t handle{};
  RMM_CUDA_TRY(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking));
  auto const old_id = stream_id(handle, current_device());
  ASSERT_EQ(remembered_id(handle), std::nullopt);
  RMM_CUDA_TRY(cudaStreamDestroy(handle));

  std::vector<rmm::cuda_stream> library_streams;
  for (int i = 0; i < 64 && (library_streams.empty() || library_streams.back().value() != handle); ++i) {
    library_streams.emplace_back(rmm::cuda_stream::flags::non_blocking);
  }
  if (can_observe_streams()) {
    ASSERT_EQ(library_streams.back().value(), handle) << "the emulator did not recycle the handle";
  }
  if (library_streams.back().value() != handle) {
    GTEST_SKIP() << "not exercised: the driver did not hand out the destroyed stream's handle again";
  }
  auto const new_id = driver_id(handle);
  ASSERT_NE(new_id, old_id);
  EXPECT_EQ(remembered_id(handle), new_id);
  EXPECT_EQ(stream_id(handle, current_device()), new_id);
}

}  // namespace
}  // namespace rmm::test
