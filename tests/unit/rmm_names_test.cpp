// SPDX-License-Identifier: Apache-2.0
// Names that code written for RMM uses beyond the resources themselves, used as that code uses
// them: the capability checks, prefetch, the exit marker, invalid_argument, the host alignment
// helpers, and the headers through which RMM code reaches RMM_CUDA_TRY and cuda_memory_resource.

// First, alone: what RMM code finds through these two headers.
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>

namespace {
[[maybe_unused]] void reaches_through_the_headers()
{
  RMM_CUDA_TRY(cudaGetLastError());
  [[maybe_unused]] rmm::mr::cuda_memory_resource cuda;
}
}  // namespace

#include <rmm/cuda_device.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/prefetch.hpp>
#include <rmm/process_is_exiting.hpp>
#include <rmm/mr/detail/resource_cast.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace rmm::test {
namespace {

int attribute(cudaDeviceAttr which)
{
  int value{};
  EXPECT_EQ(cudaDeviceGetAttribute(&value, which, rmm::get_current_cuda_device().value()), cudaSuccess);
  return value;
}

TEST(RmmNames, RuntimeCapabilitiesAnswerAsTheDeviceAndDriverDo)
{
  using namespace rmm::detail;
  EXPECT_EQ(runtime_async_alloc::is_supported(), attribute(cudaDevAttrMemoryPoolsSupported) == 1);
  EXPECT_EQ(concurrent_managed_access::is_supported(), attribute(cudaDevAttrConcurrentManagedAccess) == 1);
  EXPECT_EQ(device_integrated_memory::is_supported(), attribute(cudaDevAttrIntegrated) == 1);
  int driver{};
  int runtime{};
  ASSERT_EQ(cudaDriverGetVersion(&driver), cudaSuccess);
  ASSERT_EQ(cudaRuntimeGetVersion(&runtime), cudaSuccess);
  EXPECT_EQ(hwdecompress::is_supported(), driver >= 12080);
  EXPECT_EQ(runtime_async_managed_alloc::is_supported(),
            concurrent_managed_access::is_supported() && driver >= 13000 && runtime >= 13000);
  EXPECT_TRUE(export_handle_type::is_supported(cudaMemHandleTypeNone));
  auto const handle_types = static_cast<unsigned>(attribute(cudaDevAttrMemoryPoolSupportedHandleTypes));
  EXPECT_EQ(export_handle_type::is_supported(cudaMemHandleTypePosixFileDescriptor),
            (handle_types & cudaMemHandleTypePosixFileDescriptor) != 0);
}

TEST(RmmNames, PrefetchMigratesManagedMemoryAndLeavesOtherMemoryAlone)
{
  rmm::cuda_stream stream;
  auto const device       = rmm::get_current_cuda_device();
  constexpr std::size_t n = 1 << 20;
  void* managed           = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, n), cudaSuccess);
  std::memset(managed, 0x3c, n);
  rmm::prefetch(managed, n, device, stream);
  rmm::prefetch(cuda::std::span<unsigned char const>{static_cast<unsigned char const*>(managed), n}, device, stream);
  stream.synchronize();
  EXPECT_EQ(static_cast<unsigned char const*>(managed)[n - 1], 0x3c) << "the contents moved with the pages";
  ASSERT_EQ(cudaFree(managed), cudaSuccess);

  // Device and host memory: nothing to migrate, and no error.
  rmm::device_buffer device_memory{n, stream};
  EXPECT_NO_THROW(rmm::prefetch(device_memory.data(), n, device, stream));
  std::vector<char> host(64);
  EXPECT_NO_THROW(rmm::prefetch(host.data(), host.size(), device, stream));
  EXPECT_NO_THROW(rmm::prefetch(nullptr, 0, device, stream));
}

/// What tests/unit/exit_marker_probe printed: in main, and in a static's destructor during exit.
std::string exit_marker_probe_output()
{
  std::string output;
  FILE* pipe = ::popen(RMM_EXIT_MARKER_PROBE, "r");
  if (pipe == nullptr) { return "popen failed"; }
  char chunk[256];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) { output += chunk; }
  int const status = ::pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) { output += "(exit status " + std::to_string(status) + ")"; }
  return output;
}

TEST(RmmNames, ProcessIsExitingOnlyOnceExitBegan)
{
  EXPECT_FALSE(rmm::process_is_exiting());
  EXPECT_EQ(exit_marker_probe_output(), "exiting in main: 0\nexiting during exit: 1\n");
}

TEST(RmmNames, InvalidArgumentsAreRmmInvalidArgument)
{
  rmm::cuda_stream stream;
  // Bytes that overflow std::size_t, as RMM refuses them.
  EXPECT_THROW((rmm::device_uvector<std::uint64_t>(std::numeric_limits<std::size_t>::max() / 2, stream)),
               rmm::invalid_argument);
  EXPECT_THROW((rmm::device_buffer{64, 3, stream}), rmm::invalid_argument) << "an alignment of 3";
  try {
    rmm::device_buffer{64, 48, stream};
    ADD_FAILURE() << "an alignment of 48 was accepted";
  } catch (std::invalid_argument const& e) {  // what RMM's users catch
    EXPECT_NE(std::string{e.what()}.find("not a power of two"), std::string::npos) << e.what();
  }
}

TEST(RmmNames, SystemMemorySupportIsAlsoWhereRmmDeclaresIt)
{
  auto const device = rmm::get_current_cuda_device();
  EXPECT_EQ(rmm::mr::detail::is_system_memory_supported(device), rmm::mr::is_system_memory_supported(device));
}

TEST(RmmNames, AlignedHostAllocationsAreAlignedAndFreedWhereTheyCameFrom)
{
  std::vector<void*> given;
  std::vector<void*> freed;
  for (std::size_t alignment : {8UL, 64UL, 256UL, 4096UL}) {
    for (std::size_t bytes : {1UL, 100UL, 5000UL}) {
      void* p = rmm::detail::aligned_host_allocate(bytes, alignment, [&](std::size_t n) {
        given.push_back(std::malloc(n));
        return given.back();
      });
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignment, 0U) << bytes << " at " << alignment;
      std::memset(p, 0x5a, bytes);  // the whole range is usable (ASan checks the bounds)
      rmm::detail::aligned_host_deallocate(p, bytes, alignment, [&](void* q) {
        freed.push_back(q);
        std::free(q);
      });
    }
  }
  EXPECT_EQ(freed, given) << "each allocation went back to the allocator as it came from it";
  rmm::detail::aligned_host_deallocate(nullptr, 0, 8, [](void*) { ADD_FAILURE() << "null was freed"; });
}

TEST(RmmNames, TheInitialResourceIsWhereEveryDeviceStarts)
{
  auto const device   = rmm::get_current_cuda_device();
  auto const previous = rmm::mr::reset_per_device_resource(device);
  EXPECT_TRUE(rmm::mr::get_current_device_resource_ref() == rmm::mr::detail::initial_resource());
  EXPECT_NE(rmm::mr::detail::resource_cast<rmm::mr::cuda_memory_resource>(rmm::mr::detail::initial_resource()),
            nullptr);
  (void)rmm::mr::set_per_device_resource(device, previous);
}

TEST(RmmNames, HostReferencesAndTheThrustAllocatorsUpstream)
{
  rmm::mr::pinned_host_memory_resource pinned;
  rmm::host_async_resource_ref host{pinned};
  rmm::host_resource_ref same = host;
  void* p                     = same.allocate_sync(64, rmm::CUDA_ALLOCATION_ALIGNMENT);
  EXPECT_NE(p, nullptr);
  same.deallocate_sync(p, 64, rmm::CUDA_ALLOCATION_ALIGNMENT);
  rmm::cuda_stream stream;
  rmm::mr::thrust_allocator<int> allocator{stream};
  EXPECT_TRUE(allocator.get_upstream_resource() == allocator.memory_resource());
}

TEST(RmmNames, SafeShutdownAssertionTakesACall)
{
  int calls     = 0;
  auto const ok = [&] {
    ++calls;
    return cudaSuccess;
  };
  RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(ok());
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace rmm::test
