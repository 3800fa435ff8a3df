// SPDX-License-Identifier: Apache-2.0
// Error reporting: sticky per-thread last error, names and strings, unemulated functions.
#include "emu_test.hpp"

#include <cuda.h>

#include <thread>

extern "C" cudaError_t cudaGraphCreate(cudaGraph_t*, unsigned int);

namespace {

TEST(EmulatorErrors, LastErrorIsStickyAndPerThread)
{
  (void)cudaGetLastError();
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, std::size_t{1} << 50), cudaErrorMemoryAllocation);
  EXPECT_CUDA(cudaMemGetInfo(nullptr, nullptr) == cudaErrorInvalidValue ? cudaSuccess : cudaErrorUnknown);
  // The later failure replaced the earlier one; a success does not clear it.
  EXPECT_CUDA(cudaMalloc(&p, 16));
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue);
  std::thread([] { EXPECT_CUDA(cudaPeekAtLastError()); }).join();  // other threads have their own
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaGetLastError());
  EXPECT_CUDA(cudaFree(p));
}

TEST(EmulatorErrors, NamesAndStrings)
{
  EXPECT_STREQ(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorCudartUnloading), "driver shutting down");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidResourceHandle), "invalid resource handle");
  EXPECT_STREQ(cudaGetErrorName(static_cast<cudaError_t>(12345)), "unrecognized error code");
  EXPECT_STREQ(cudaGetErrorString(static_cast<cudaError_t>(12345)), "unrecognized error code");
  // Every code the emulated runtime returns has its real name.
  for (cudaError_t e : {cudaSuccess, cudaErrorInvalidValue, cudaErrorMemoryAllocation, cudaErrorInitializationError,
                        cudaErrorCudartUnloading, cudaErrorInvalidDevice, cudaErrorNoDevice,
                        cudaErrorInvalidResourceHandle, cudaErrorNotReady, cudaErrorNotSupported, cudaErrorNotPermitted,
                        cudaErrorInvalidMemcpyDirection, cudaErrorSymbolNotFound, cudaErrorPeerAccessAlreadyEnabled,
                        cudaErrorPeerAccessNotEnabled, cudaErrorInsufficientDriver, cudaErrorDeviceUninitialized,
                        cudaErrorMissingConfiguration, cudaErrorSetOnActiveProcess}) {
    EXPECT_STRNE(cudaGetErrorName(e), "unrecognized error code") << static_cast<int>(e);
  }
  using name_fn  = CUresult (*)(CUresult, char const**);
  auto cu_name   = emu::driver_entry<name_fn>("cuGetErrorName", 6000);
  auto cu_string = emu::driver_entry<name_fn>("cuGetErrorString", 6000);
  ASSERT_NE(cu_name, nullptr);
  char const* s = nullptr;
  ASSERT_EQ(cu_name(CUDA_ERROR_OUT_OF_MEMORY, &s), CUDA_SUCCESS);
  EXPECT_STREQ(s, "CUDA_ERROR_OUT_OF_MEMORY");
  ASSERT_EQ(cu_string(CUDA_ERROR_OUT_OF_MEMORY, &s), CUDA_SUCCESS);
  EXPECT_STREQ(s, "out of memory");
  EXPECT_EQ(cu_name(static_cast<CUresult>(12345), &s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(s, nullptr);
}

TEST(EmulatorErrors, QueriesDoNotSetTheLastError)
{
  (void)cudaGetLastError();
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  ASSERT_CUDA(cudaLaunchHostFunc(
    s, [](void*) { emu::sleep_ms(100); }, nullptr));
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  EXPECT_CUDA(cudaPeekAtLastError());
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_CUDA(cudaStreamDestroy(s));
}

TEST(EmulatorErrors, UnemulatedFunctionsSayWhat)
{
  testing::internal::CaptureStderr();
  cudaGraph_t g = nullptr;
  EXPECT_EQ(cudaGraphCreate(&g, 0), cudaErrorNotSupported);
  EXPECT_EQ(cudaGraphCreate(&g, 0), cudaErrorNotSupported);
  std::string const err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "rmm CUDA emulator: cudaGraphCreate is not emulated; returning cudaErrorNotSupported\n");
  EXPECT_EQ(cudaGetLastError(), cudaErrorNotSupported);
}

TEST(EmulatorErrors, KernelLaunchesFail)
{
  testing::internal::CaptureStderr();
  void* args[1]{};
  auto const fake_kernel = reinterpret_cast<void const*>(&cudaGetLastError);
  EXPECT_EQ(cudaLaunchKernel(fake_kernel, dim3(1), dim3(1), args, 0, nullptr), cudaErrorNotSupported);
  EXPECT_EQ(cudaLaunchKernel(fake_kernel, dim3(1), dim3(1), args, 0, nullptr), cudaErrorNotSupported);
  std::string const err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "rmm CUDA emulator: kernel launches are not emulated; run gpu-labelled tests on a GPU\n");
  EXPECT_EQ(cudaGetLastError(), cudaErrorNotSupported);
}

TEST(EmulatorErrors, NvccBuiltProgramsLoadAndTheirLaunchesFail)
{
#ifdef RMM_EMU_NVCC_PROGRAM
  auto const r = emu::run_child({RMM_EMU_NVCC_PROGRAM});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(
    r.out,
    "cudaMalloc cudaSuccess\nlaunch cudaErrorNotSupported\nlaunch cudaErrorNotSupported\ncudaFree cudaSuccess\n");
  EXPECT_EQ(r.err, "rmm CUDA emulator: kernel launches are not emulated; run gpu-labelled tests on a GPU\n");
#else
  GTEST_SKIP() << "no nvcc, or a sanitizer build";
#endif
}

}  // namespace
