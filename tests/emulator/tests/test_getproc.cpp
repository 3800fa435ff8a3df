// SPDX-License-Identifier: Apache-2.0
// cuGetProcAddress: version selection, per-thread flavours, failures; the driver before cuInit.
#include "emu_test.hpp"

#include <cuda.h>
#include <dlfcn.h>

extern "C" cudaError_t cudaGetDriverEntryPoint_ptsz(char const*,
                                                    void**,
                                                    unsigned long long,
                                                    cudaDriverEntryPointQueryResult*);

namespace {

using resolver_fn = CUresult (*)(char const*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

class EmulatorGetProcAddress : public ::testing::Test {
 protected:
  void SetUp() override
  {
    emu::control();  // initialised, so libcuda.so.1 is loaded
    lib_ = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
    ASSERT_NE(lib_, nullptr);
    resolve_ = reinterpret_cast<resolver_fn>(dlsym(lib_, "cuGetProcAddress_v2"));
    ASSERT_NE(resolve_, nullptr);
  }
  void TearDown() override { dlclose(lib_); }

  void* exported(char const* name) { return dlsym(lib_, name); }

  // The pointer the resolver hands out, checking the status it reports.
  void* lookup(char const* name, int version, cuuint64_t flags = 0)
  {
    void* fn                              = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    EXPECT_EQ(resolve_(name, &fn, version, flags, &status), CUDA_SUCCESS) << name << " " << version;
    EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
    EXPECT_NE(fn, nullptr);
    return fn;
  }

  void* lib_           = nullptr;
  resolver_fn resolve_ = nullptr;
};

TEST_F(EmulatorGetProcAddress, NewestVariantAtOrBeforeTheVersion)
{
  EXPECT_EQ(lookup("cuMemAlloc", 3020), exported("cuMemAlloc_v2"));
  EXPECT_EQ(lookup("cuMemAlloc", 13000), exported("cuMemAlloc_v2"));
  EXPECT_EQ(lookup("cuMemAlloc", 2000), exported("cuMemAlloc"));  // the 32-bit ABI of CUDA 2.0
  EXPECT_EQ(lookup("cuGetProcAddress", 12000), exported("cuGetProcAddress_v2"));
  EXPECT_EQ(lookup("cuGetProcAddress", 11030), exported("cuGetProcAddress"));
  EXPECT_EQ(lookup("cuCtxSynchronize", 13000), exported("cuCtxSynchronize_v2"));
  EXPECT_EQ(lookup("cuCtxSynchronize", 12090), exported("cuCtxSynchronize"));
  EXPECT_EQ(lookup("cuEventElapsedTime", 12080), exported("cuEventElapsedTime_v2"));
  EXPECT_EQ(lookup("cuMemPrefetchAsync", 12020), exported("cuMemPrefetchAsync_v2"));
  EXPECT_EQ(lookup("cuStreamGetCaptureInfo", 12030), exported("cuStreamGetCaptureInfo_v3"));
}

TEST_F(EmulatorGetProcAddress, PerThreadFlagSelectsPtszAndPtds)
{
  cuuint64_t const pt = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  for (char const* base : {"cuMemAllocAsync", "cuMemFreeAsync", "cuMemAllocFromPoolAsync"}) {
    std::string const ptsz = std::string(base) + "_ptsz";
    void* legacy           = lookup(base, 11020, 0);
    void* per_thread       = lookup(base, 11020, pt);
    EXPECT_EQ(legacy, exported(base));
    EXPECT_EQ(per_thread, exported(ptsz.c_str()));
    EXPECT_NE(legacy, per_thread);
    EXPECT_EQ(lookup(base, 11020, CU_GET_PROC_ADDRESS_LEGACY_STREAM), legacy);
  }
  EXPECT_EQ(lookup("cuMemcpy", 7000, pt), exported("cuMemcpy_ptds"));
  EXPECT_EQ(lookup("cuMemcpyHtoD", 7000, pt), exported("cuMemcpyHtoD_v2_ptds"));
  EXPECT_EQ(lookup("cuMemcpyHtoD", 3020, pt), exported("cuMemcpyHtoD_v2"));  // no per-thread flavour yet
  EXPECT_EQ(lookup("cuStreamGetCaptureInfo", 12030, pt), exported("cuStreamGetCaptureInfo_v3_ptsz"));
  EXPECT_EQ(lookup("cuMemPrefetchAsync", 12020, pt), exported("cuMemPrefetchAsync_v2_ptsz"));
  EXPECT_EQ(lookup("cuStreamSynchronize", 7000, pt), exported("cuStreamSynchronize_ptsz"));
  EXPECT_EQ(lookup("cuMemAlloc", 3020, pt), exported("cuMemAlloc_v2"));  // stream-less: one flavour
}

TEST_F(EmulatorGetProcAddress, Failures)
{
  void* fn                              = reinterpret_cast<void*>(0x1);
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  EXPECT_EQ(resolve_("cuNoSuchFunction", &fn, 13000, 0, &status), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(fn, nullptr);
  fn = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(resolve_("cuMemAllocAsync", &fn, 11010, 0, &status), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(fn, nullptr);
  EXPECT_EQ(resolve_("cuMemAlloc", &fn, 3020, 4, &status), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(resolve_(nullptr, &fn, 3020, 0, &status), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(resolve_("cuMemAlloc", nullptr, 3020, 0, &status), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(resolve_("cuMemAlloc", &fn, 3020, 0, nullptr), CUDA_SUCCESS);  // the status is optional
  // What NVIDIA's libcudart asks first: an empty name at version 0 (the H200 driver said yes).
  EXPECT_EQ(resolve_("", &fn, 0, 0, nullptr), CUDA_SUCCESS);
}

TEST_F(EmulatorGetProcAddress, EveryOtherDriverEntryPointIsFoundAndSaysItIsNotEmulated)
{
  // A runtime that asks for every entry point at start (the static one) takes a missing one for a
  // driver too old; the emulator hands out stubs that answer CUDA_ERROR_NOT_SUPPORTED instead.
  using module_load_fn = CUresult (*)(CUmodule*, char const*);
  auto const load      = reinterpret_cast<module_load_fn>(lookup("cuModuleLoad", 13000));
  CUmodule module{};
  EXPECT_EQ(load(&module, "nowhere.cubin"), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_NE(lookup("cuGraphInstantiate", 12000), nullptr);
  EXPECT_NE(lookup("cuProfilerStart", 4000), nullptr);
  void* fn                              = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  // A stub keeps the version it has in the driver: not there before it.
  EXPECT_EQ(resolve_("cuLibraryLoadData", &fn, 11080, 0, &status), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

// cudaGetDriverEntryPoint is deprecated in CUDA 13 but still what PyTorch and others call.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_F(EmulatorGetProcAddress, ThroughTheRuntime)
{
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  ASSERT_CUDA(cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &status));
  EXPECT_EQ(fn, exported("cuMemAlloc_v2"));
  ASSERT_CUDA(cudaGetDriverEntryPoint_ptsz("cuMemAllocAsync", &fn, cudaEnableDefault, &status));
  EXPECT_EQ(fn, exported("cuMemAllocAsync_ptsz"));
  EXPECT_EQ(cudaGetDriverEntryPoint("cuNoSuchFunction", &fn, cudaEnableDefault, &status), cudaErrorSymbolNotFound);
  EXPECT_EQ(status, cudaDriverEntryPointSymbolNotFound);
  EXPECT_EQ(cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 11000, cudaEnableDefault, &status),
            cudaErrorSymbolNotFound);
  EXPECT_EQ(status, cudaDriverEntryPointVersionNotSufficent);
  (void)cudaGetLastError();
}
#pragma GCC diagnostic pop

TEST(EmulatorDriver, NothingButTheBasicsBeforeCuInit)
{
  auto const r = emu::run_child({emu::child_path(), "preinit"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "cuDeviceGetCount 3\n"  // CUDA_ERROR_NOT_INITIALIZED
            "cuDriverGetVersion 0 13000\n"
            "cuGetProcAddress 0\n"
            "cuMemAlloc 3\n"
            "cuInit 0\n"
            "cuDeviceGetCount 0 2\n"
            "cuMemAlloc 201\n");  // CUDA_ERROR_INVALID_CONTEXT: nothing is current
}

TEST(EmulatorDriver, ForkedChildCannotUseCuda)
{
  auto const r = emu::run_child({emu::child_path(), "fork"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "child cudaMalloc cudaErrorInitializationError\nparent cudaFree cudaSuccess\n");
}

}  // namespace
