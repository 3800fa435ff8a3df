// SPDX-License-Identifier: Apache-2.0
// Devices: count and capacity from the environment, per-thread current device, attributes.
#include "emu_test.hpp"

#include <cstring>
#include <thread>

namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;

TEST(EmulatorDevices, IdentifiesItself)
{
  ASSERT_NE(emu::control().version, nullptr);
  EXPECT_NE(std::strstr(emu::control().version(), "rmm-cuda-emulator"), nullptr);
}

TEST(EmulatorDevices, DefaultsAreTwoDevicesOf16GiB)
{
  auto const r = emu::run_child({emu::child_path(), "devices"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("count 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device 0 total 17179869184 free 17179869184 memgetinfo_total 17179869184"), std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("device 1 total 17179869184"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(EmulatorDevices, CountAndCapacityFromEnvironment)
{
  auto const r =
    emu::run_child({emu::child_path(), "devices"}, {"RMM_EMU_DEVICE_COUNT=3", "RMM_EMU_DEVICE_MEMORY=512MiB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("count 3\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device 2 total 536870912 free 536870912"), std::string::npos) << r.out;
}

TEST(EmulatorDevices, CapacityAcceptsBytesAndEverySuffix)
{
  struct Case {
    char const* value;
    char const* expect;
  };
  for (auto const& c :
       {Case{"1073741824", "total 1073741824 "}, Case{"1048576KiB", "total 1073741824 "},
        Case{"2gib", "total 2147483648 "}, Case{"4096MiB", "total 4294967296 "}, Case{"2097152B", "total 2097152 "}}) {
    auto const r = emu::run_child({emu::child_path(), "devices"},
                                  {"RMM_EMU_DEVICE_COUNT=1", std::string("RMM_EMU_DEVICE_MEMORY=") + c.value});
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.value << ": " << r.out << r.err;
  }
}

TEST(EmulatorDevices, ZeroDevicesMeansNoDevice)
{
  auto const r = emu::run_child({emu::child_path(), "devices"}, {"RMM_EMU_DEVICE_COUNT=0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("status cudaErrorNoDevice\ncount 0"), std::string::npos) << r.out;
}

TEST(EmulatorDevices, CurrentDeviceIsPerThread)
{
  ASSERT_CUDA(cudaSetDevice(1));
  int dev = -1;
  ASSERT_CUDA(cudaGetDevice(&dev));
  EXPECT_EQ(dev, 1);
  std::thread([] {
    int d = -1;
    EXPECT_CUDA(cudaGetDevice(&d));
    EXPECT_EQ(d, 0);  // a new thread starts on device 0
    EXPECT_CUDA(cudaSetDevice(1));
    EXPECT_CUDA(cudaSetDevice(0));
    EXPECT_CUDA(cudaGetDevice(&d));
    EXPECT_EQ(d, 0);
  }).join();
  ASSERT_CUDA(cudaGetDevice(&dev));
  EXPECT_EQ(dev, 1);  // untouched by the other thread
  // Allocations land on the current device.
  void* p = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 4096));
  cudaPointerAttributes attr{};
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, p));
  EXPECT_EQ(attr.device, 1);
  EXPECT_CUDA(cudaFree(p));
  ASSERT_CUDA(cudaSetDevice(0));
}

TEST(EmulatorDevices, BadOrdinalsAreInvalidDevice)
{
  EXPECT_EQ(cudaSetDevice(99), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaSetDevice(-1), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
  int v = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrManagedMemory, 99), cudaErrorInvalidDevice);
  cudaDeviceProp prop{};
  EXPECT_EQ(cudaGetDeviceProperties(&prop, 7), cudaErrorInvalidDevice);
  (void)cudaGetLastError();
  int dev = -1;
  EXPECT_CUDA(cudaGetDevice(&dev));
  EXPECT_EQ(dev, 0);
}

TEST(EmulatorDevices, AttributesMatchTheH200)
{
  struct Case {
    cudaDeviceAttr attr;
    int value;
  };
  for (auto const& c : {Case{cudaDevAttrMemoryPoolsSupported, 1}, Case{cudaDevAttrMemoryPoolSupportedHandleTypes, 9},
                        Case{cudaDevAttrPageableMemoryAccess, 0}, Case{cudaDevAttrConcurrentManagedAccess, 1},
                        Case{cudaDevAttrManagedMemory, 1}, Case{cudaDevAttrIntegrated, 0},
                        Case{cudaDevAttrHostRegisterSupported, 1}, Case{cudaDevAttrComputeCapabilityMajor, 9},
                        Case{cudaDevAttrComputeCapabilityMinor, 0}, Case{cudaDevAttrMultiProcessorCount, 132},
                        Case{cudaDevAttrUnifiedAddressing, 1}, Case{cudaDevAttrWarpSize, 32}}) {
    int v = -1;
    EXPECT_CUDA(cudaDeviceGetAttribute(&v, c.attr, 1));
    EXPECT_EQ(v, c.value) << "attribute " << c.attr;
  }
  int v = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(100000), 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceGetAttribute(nullptr, cudaDevAttrWarpSize, 0), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(EmulatorDevices, PageableMemoryAccessIsConfigurable)
{
  emu::Knob knob("RMM_EMU_PAGEABLE_MEMORY_ACCESS", "1");
  int v = 0;
  ASSERT_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccess, 0));
  EXPECT_EQ(v, 1);
}

TEST(EmulatorDevices, PropertiesAndVersions)
{
  cudaDeviceProp prop{};
  ASSERT_CUDA(cudaGetDeviceProperties(&prop, 0));
  EXPECT_STREQ(prop.name, "RMM CUDA emulator");
  EXPECT_EQ(prop.totalGlobalMem, 16 * kGiB);
  EXPECT_EQ(prop.major, 9);
  EXPECT_EQ(prop.minor, 0);
  EXPECT_EQ(prop.memoryPoolsSupported, 1);
  int driver  = 0;
  int runtime = 0;
  ASSERT_CUDA(cudaDriverGetVersion(&driver));
  ASSERT_CUDA(cudaRuntimeGetVersion(&runtime));
  EXPECT_EQ(driver, 13000);
  EXPECT_EQ(runtime, 13000);
}

TEST(EmulatorDevices, PeerAccess)
{
  int can = -1;
  ASSERT_CUDA(cudaDeviceCanAccessPeer(&can, 0, 1));
  EXPECT_EQ(can, 1);
  ASSERT_CUDA(cudaDeviceCanAccessPeer(&can, 0, 0));
  EXPECT_EQ(can, 0);
  EXPECT_EQ(cudaDeviceCanAccessPeer(&can, 0, 5), cudaErrorInvalidDevice);
  ASSERT_CUDA(cudaSetDevice(0));
  ASSERT_CUDA(cudaDeviceEnablePeerAccess(1, 0));
  EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
  EXPECT_CUDA(cudaDeviceDisablePeerAccess(1));
  EXPECT_EQ(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
  (void)cudaGetLastError();
}

TEST(EmulatorDevices, DeviceShapeIsFixedAfterInit)
{
  EXPECT_NE(emu::control().set("RMM_EMU_DEVICE_COUNT", "4"), 0);
  EXPECT_NE(std::strstr(emu::control().last_error(), "fixed once cuInit has run"), nullptr)
    << emu::control().last_error();
}

TEST(EmulatorDevices, ResetFreesTheDevicesMemory)
{
  ASSERT_CUDA(cudaSetDevice(1));
  void* p = nullptr;
  void* q = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 1 << 20));
  ASSERT_CUDA(cudaMallocAsync(&q, 1 << 20, nullptr));
  EXPECT_EQ(emu::control().live_allocations(1, RMM_EMU_KIND_DEVICE | RMM_EMU_KIND_ASYNC), 2);
  ASSERT_CUDA(cudaDeviceReset());
  EXPECT_EQ(emu::control().live_allocations(1, RMM_EMU_KIND_ALL & ~RMM_EMU_KIND_PINNED), 0);
  EXPECT_EQ(emu::control().device_used_bytes(1), 0);
  EXPECT_EQ(cudaFree(p), cudaErrorInvalidValue);  // gone with the reset
  (void)cudaGetLastError();
  ASSERT_CUDA(cudaMalloc(&p, 1 << 20));  // the device works again
  EXPECT_CUDA(cudaFree(p));
  ASSERT_CUDA(cudaSetDevice(0));
}

}  // namespace
