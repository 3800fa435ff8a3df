// SPDX-License-Identifier: Apache-2.0
// Fault injection and configuration errors.
#include "emu_test.hpp"

#include <cstring>

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(EmulatorFaults, NthAllocationFailsOnce)
{
  emu::Knob nth("RMM_EMU_FAIL_ALLOC_NTH", "3");
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* d = nullptr;
  EXPECT_CUDA(cudaMalloc(&a, 1024));
  EXPECT_CUDA(cudaMallocManaged(&b, 1024));
  EXPECT_EQ(cudaMallocAsync(&c, 1024, nullptr), cudaErrorMemoryAllocation);  // the third, whatever its kind
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_CUDA(cudaMallocAsync(&c, 1024, nullptr));  // once only
  EXPECT_CUDA(cudaMallocHost(&d, 1024));
  EXPECT_CUDA(cudaFree(a));
  EXPECT_CUDA(cudaFree(b));
  EXPECT_CUDA(cudaFreeAsync(c, nullptr));
  EXPECT_CUDA(cudaFreeHost(d));
}

TEST(EmulatorFaults, AllocationsAboveASizeFail)
{
  emu::Knob above("RMM_EMU_FAIL_ALLOC_ABOVE", "1MiB");
  void* p = nullptr;
  EXPECT_CUDA(cudaMalloc(&p, kMiB));
  EXPECT_CUDA(cudaFree(p));
  EXPECT_EQ(cudaMalloc(&p, kMiB + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaMallocManaged(&p, kMiB + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaMallocHost(&p, kMiB + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaMallocAsync(&p, kMiB + 1, nullptr), cudaErrorMemoryAllocation);
  ASSERT_EQ(emu::control().set("RMM_EMU_FAIL_ALLOC_ABOVE", "off"), 0);
  EXPECT_CUDA(cudaMalloc(&p, kMiB + 1));
  EXPECT_CUDA(cudaFree(p));
  // The size syntax of RMM_EMU_DEVICE_MEMORY, up to TiB (too large a device for a sanitizer build).
  ASSERT_EQ(emu::control().set("RMM_EMU_FAIL_ALLOC_ABOVE", "1TiB"), 0);
  EXPECT_CUDA(cudaMalloc(&p, kMiB));
  EXPECT_CUDA(cudaFree(p));
  ASSERT_EQ(emu::control().set("RMM_EMU_FAIL_ALLOC_ABOVE", "2kib"), 0);
  EXPECT_CUDA(cudaMalloc(&p, 2048));
  EXPECT_CUDA(cudaFree(p));
  EXPECT_EQ(cudaMalloc(&p, 2049), cudaErrorMemoryAllocation);
  (void)cudaGetLastError();
}

TEST(EmulatorFaults, AttemptsAreCounted)
{
  auto const before = emu::control().allocation_attempts();
  void* p           = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 16));
  ASSERT_CUDA(cudaFree(p));
  ASSERT_CUDA(cudaMalloc(&p, 0));  // zero bytes never reach the driver
  EXPECT_EQ(emu::control().allocation_attempts(), before + 1);
}

TEST(EmulatorFaults, NthFromTheEnvironmentCountsFromStart)
{
  auto const r = emu::run_child({emu::child_path(), "allocs", "3"}, {"RMM_EMU_FAIL_ALLOC_NTH=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "alloc 1 cudaSuccess\nalloc 2 cudaErrorMemoryAllocation\nalloc 3 cudaSuccess\n");
}

TEST(EmulatorFaults, BadEnvironmentValuesFailInitialisationLoudly)
{
  struct Case {
    char const* entry;
    char const* mention;
  };
  for (auto const& c :
       {Case{"RMM_EMU_DEVICE_MEMORY=16GB", "RMM_EMU_DEVICE_MEMORY=\"16GB\" is invalid: expected a size"},
        Case{"RMM_EMU_DEVICE_MEMORY=", "RMM_EMU_DEVICE_MEMORY=\"\" is invalid"},
        Case{"RMM_EMU_DEVICE_MEMORY=1.5GiB", "RMM_EMU_DEVICE_MEMORY"},
        Case{"RMM_EMU_DEVICE_COUNT=two", "RMM_EMU_DEVICE_COUNT=\"two\" is invalid: expected an integer"},
        Case{"RMM_EMU_DEVICE_COUNT=65", "RMM_EMU_DEVICE_COUNT"},
        Case{"RMM_EMU_STREAM_DELAY_US=-1", "RMM_EMU_STREAM_DELAY_US"},
        Case{"RMM_EMU_FAIL_ALLOC_NTH=1.5", "RMM_EMU_FAIL_ALLOC_NTH"},
        Case{"RMM_EMU_FAIL_ALLOC_ABOVE=lots", "RMM_EMU_FAIL_ALLOC_ABOVE"},
        Case{"RMM_EMU_PAGEABLE_MEMORY_ACCESS=yes", "RMM_EMU_PAGEABLE_MEMORY_ACCESS"},
        Case{"RMM_EMU_DEVICES=2", "unknown environment variable RMM_EMU_DEVICES"}}) {
    auto const r = emu::run_child({emu::child_path(), "devices"}, {c.entry});
    EXPECT_EQ(r.exit_code, 0) << c.entry;
    EXPECT_NE(r.out.find("status cudaErrorInitializationError"), std::string::npos) << c.entry << ": " << r.out;
    EXPECT_NE(r.err.find(c.mention), std::string::npos) << c.entry << ": " << r.err;
    EXPECT_NE(r.err.find("cuInit fails with CUDA_ERROR_INVALID_VALUE"), std::string::npos) << r.err;
  }
}

TEST(EmulatorFaults, ControlApiRejectsBadSettings)
{
  auto const& ctl = emu::control();
  EXPECT_NE(ctl.set("RMM_EMU_NO_SUCH_THING", "1"), 0);
  EXPECT_NE(std::strstr(ctl.last_error(), "unknown setting"), nullptr);
  EXPECT_NE(ctl.set("RMM_EMU_STREAM_DELAY_US", "soon"), 0);
  EXPECT_NE(std::strstr(ctl.last_error(), "expected an integer number of microseconds"), nullptr) << ctl.last_error();
  EXPECT_EQ(ctl.set("RMM_EMU_STREAM_DELAY_US", "0"), 0);
  EXPECT_STREQ(ctl.last_error(), "");
}

}  // namespace
