// SPDX-License-Identifier: Apache-2.0
// The driver table's binding rules, as an embedder (the preload shim) uses them. The table is
// bound once per process, so this program has its own main() (nothing may touch CUDA before the
// first case) and CTest runs its cases in one process, in the order written.

#include "../../core/src/detail/cuda_driver.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>

namespace {

using ::testing::HasSubstr;

constexpr std::size_t MiB = std::size_t{1} << 20;

PFN_cuGetProcAddress_v12000 libcuda_get_proc_address()
{
  static auto* const resolver = [] {
    void* library = ::dlopen("libcuda.so.1", RTLD_NOW);
    return library != nullptr ? reinterpret_cast<PFN_cuGetProcAddress_v12000>(::dlsym(library, "cuGetProcAddress_v2"))
                              : nullptr;
  }();
  return resolver;
}

void* from_libcuda(char const* name, int version, cuuint64_t flags)
{
  void* address = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (libcuda_get_proc_address()(name, &address, version, flags, &status) != CUDA_SUCCESS ||
      status != CU_GET_PROC_ADDRESS_SUCCESS) {
    return nullptr;
  }
  return address;
}

// What the embedder's resolver was asked.
std::mutex asked_mutex;
std::set<std::string> asked;
std::size_t lookups     = 0;
bool only_default_flags = true;

void* embedder_resolver(char const* name, int version, cuuint64_t flags)
{
  {
    std::lock_guard lock{asked_mutex};
    asked.insert(name);
    ++lookups;
    only_default_flags = only_default_flags && flags == CU_GET_PROC_ADDRESS_DEFAULT;
  }
  return from_libcuda(name, version, flags);
}

void* resolver_without_pools(char const* name, int version, cuuint64_t flags)
{
  if (std::string_view{name} == "cuMemPoolCreate") { return nullptr; }
  return from_libcuda(name, version, flags);
}

std::size_t lookup_count()
{
  std::lock_guard lock{asked_mutex};
  return lookups;
}

TEST(DriverSeam, AResolverWithoutAnEntryPointBindsNothing)
{
  try {
    (void)rmm::detail::bind_cuda_driver(&resolver_without_pools);
    FAIL() << "bound without cuMemPoolCreate";
  } catch (rmm::cuda_error const& e) {
    EXPECT_THAT(e.what(), HasSubstr("has no cuMemPoolCreate for CUDA version 11020"));
  }
}

TEST(DriverSeam, AnEmbedderBindsTheTableOnceBeforeFirstUse)
{
  ASSERT_TRUE(rmm::detail::bind_cuda_driver(&embedder_resolver));
  auto const resolved = lookup_count();
  EXPECT_GE(resolved, 40U);
  EXPECT_TRUE(only_default_flags);
  for (char const* name : {"cuInit", "cuMemAlloc", "cuMemAllocFromPoolAsync", "cuStreamGetId", "cuMemCreate"}) {
    EXPECT_EQ(asked.count(name), 1U) << name;
  }
  EXPECT_FALSE(rmm::detail::bind_cuda_driver(&embedder_resolver)) << "bound once";
  EXPECT_FALSE(rmm::detail::bind_cuda_driver(&from_libcuda));
  EXPECT_EQ(lookup_count(), resolved) << "a refused binding resolves nothing";
}

TEST(DriverSeam, CoreRunsOnTheEmbeddersTable)
{
  auto const resolved = lookup_count();
  EXPECT_GE(rmm::get_num_cuda_devices(), 1);
  EXPECT_EQ(rmm::get_current_cuda_device(), rmm::cuda_device_id{0});
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::cuda_async_memory_resource async;
  rmm::mr::pool_memory_resource pool{cuda, 0};
  rmm::cuda_stream_view const stream{};
  for (rmm::mr::device_memory_resource* mr :
       {static_cast<rmm::mr::device_memory_resource*>(&cuda), static_cast<rmm::mr::device_memory_resource*>(&async),
        static_cast<rmm::mr::device_memory_resource*>(&pool)}) {
    void* ptr = mr->allocate(stream, MiB);
    EXPECT_NE(ptr, nullptr);
    mr->deallocate(stream, ptr, MiB);
    EXPECT_EQ(mr->allocate(stream, 0), nullptr) << "zero bytes are a null pointer, as cudaMalloc answers";
  }
  EXPECT_EQ(lookup_count(), resolved) << "every entry point was resolved at binding";
}

TEST(DriverSeam, ErrorsNameTheDriverCall)
{
  CUdevice device{};
  try {
    RMM_CU_TRY(cuDeviceGet(&device, 9999));
    FAIL() << "device 9999 exists";
  } catch (rmm::cuda_error const& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("cuDeviceGet(&device, 9999) failed: CUDA_ERROR_INVALID_DEVICE (101): invalid device "
                          "ordinal (at "));
  }
  constexpr std::size_t one_pib = std::size_t{1} << 50;
  CUdeviceptr ptr{};
  try {
    RMM_CU_TRY_ALLOC(cuMemAlloc_v2(&ptr, one_pib), one_pib, "the test");
    FAIL() << "1 PiB allocated";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_THAT(e.what(), HasSubstr("the test could not allocate 1.00 PiB (1125899906842624 bytes): "
                                    "cuMemAlloc_v2(&ptr, one_pib) failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory; "
                                    "device 0 has "));
  }
}

TEST(DriverSeam, AThreadWithoutAContextGetsDeviceZerosPrimaryContext)
{
  std::thread{[] {
    CUcontext context{};
    RMM_CU_TRY(cuCtxGetCurrent(&context));
    EXPECT_EQ(context, nullptr) << "a new thread starts without a context";
    {
      rmm::cuda_set_device_raii const on_device{rmm::cuda_device_id{0}};
      RMM_CU_TRY(cuCtxGetCurrent(&context));
      EXPECT_EQ(context, rmm::detail::primary_context(0));
    }
    RMM_CU_TRY(cuCtxGetCurrent(&context));
    EXPECT_EQ(context, nullptr) << "the scope restores no context";

    // The first allocation makes one current, as the runtime's lazy initialisation would.
    rmm::mr::cuda_memory_resource cuda;
    void* ptr = cuda.allocate(rmm::cuda_stream_view{}, MiB);
    RMM_CU_TRY(cuCtxGetCurrent(&context));
    EXPECT_EQ(context, rmm::detail::primary_context(0));
    EXPECT_EQ(rmm::get_current_cuda_device(), rmm::cuda_device_id{0});
    cuda.deallocate(rmm::cuda_stream_view{}, ptr, MiB);
  }}.join();
}

}  // namespace

// Refuses to run on a backend other than the one CTest asked for, without binding the table.
int main(int argc, char** argv)
{
  testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) { return RUN_ALL_TESTS(); }
  if (libcuda_get_proc_address() == nullptr) {
    std::fprintf(stderr, "no usable libcuda.so.1: %s\n", ::dlerror());
    return 1;
  }
  void* library          = ::dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
  bool const on_emulator = library != nullptr && ::dlsym(library, "rmm_emu_version") != nullptr;
  char const* expected   = std::getenv("RMM_EXPECTED_BACKEND");
  char const* actual     = on_emulator ? "emulator" : "cuda";
  if (expected != nullptr && std::string_view{expected} != actual) {
    std::fprintf(stderr, "test backend mismatch: expected %s, running on %s\n", expected, actual);
    return 1;
  }
  return RUN_ALL_TESTS();
}
