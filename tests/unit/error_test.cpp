// SPDX-License-Identifier: Apache-2.0
#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string what_of(auto&& callable)
{
  try {
    callable();
  } catch (std::exception const& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(Expects, ThrowsLogicErrorWithReasonAndLocation)
{
  auto const message = what_of([] { RMM_EXPECTS(1 + 1 == 3, "arithmetic is broken"); });
  // As RMM words it; the file by its path in the project, not on the build machine.
  EXPECT_THAT(message, StartsWith("RMM failure at: tests/unit/error_test.cpp:"));
  EXPECT_THAT(message, EndsWith(": arithmetic is broken"));
  EXPECT_THROW(RMM_EXPECTS(false, "x"), rmm::logic_error);
  EXPECT_NO_THROW(RMM_EXPECTS(true, "never"));
}

TEST(Expects, ThrowsTheRequestedExceptionType)
{
  EXPECT_THROW(RMM_EXPECTS(false, "x", std::invalid_argument), std::invalid_argument);
  EXPECT_THROW(RMM_EXPECTS(false, std::string{"built"} + " reason", rmm::out_of_memory), rmm::out_of_memory);
}

TEST(Fail, AlwaysThrows)
{
  EXPECT_THROW(RMM_FAIL("unreachable"), rmm::logic_error);
  EXPECT_THROW(RMM_FAIL("unreachable", rmm::cuda_error), rmm::cuda_error);
  EXPECT_THAT(what_of([] { RMM_FAIL("the reason"); }), HasSubstr("the reason"));
}

TEST(CudaTry, ThrowsCudaErrorNamingCallAndErrorAndClearsIt)
{
  auto const message = what_of([] { RMM_CUDA_TRY(cudaSetDevice(9999)); });
  EXPECT_THAT(message, StartsWith("CUDA error at: tests/unit/error_test.cpp:"));
  EXPECT_THAT(message, HasSubstr("cudaErrorInvalidDevice"));
  EXPECT_THAT(message, HasSubstr("in `cudaSetDevice(9999)`"));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_THROW(RMM_CUDA_TRY(cudaSetDevice(9999)), rmm::cuda_error);
  EXPECT_THROW(RMM_CUDA_TRY(cudaSetDevice(9999), std::runtime_error), std::runtime_error);
  EXPECT_NO_THROW(RMM_CUDA_TRY(cudaSetDevice(0)));
}

TEST(CudaTryAlloc, OutOfMemoryNamesTheSize)
{
  void* ptr{};
  constexpr std::size_t one_pib = std::size_t{1} << 50;
  try {
    RMM_CUDA_TRY_ALLOC(cudaMalloc(&ptr, one_pib), one_pib);
    FAIL() << "1 PiB cudaMalloc succeeded";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_THAT(e.what(), StartsWith("out_of_memory: CUDA error (failed to allocate 1125899906842624 bytes) at: "
                                     "tests/unit/error_test.cpp:"));
    EXPECT_THAT(e.what(), HasSubstr("1.00 PiB (1125899906842624 bytes)"));
    EXPECT_THAT(e.what(), HasSubstr("cudaErrorMemoryAllocation"));
    EXPECT_THAT(e.what(), HasSubstr(" free of "));
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CudaTryAlloc, OtherErrorsAreBadAllocNotOutOfMemory)
{
  try {
    RMM_CUDA_TRY_ALLOC(cudaSetDevice(-1));
    FAIL() << "nothing thrown";
  } catch (rmm::out_of_memory const&) {
    FAIL() << "an invalid device is not out of memory";
  } catch (rmm::bad_alloc const& e) {
    EXPECT_THAT(e.what(), HasSubstr("cudaErrorInvalidDevice"));
    EXPECT_THAT(e.what(), HasSubstr("CUDA error at: ")) << "RMM's marker for a call without a size";
  }
}

TEST(Exceptions, Hierarchy)
{
  static_assert(std::is_base_of_v<std::bad_alloc, rmm::bad_alloc>);
  static_assert(std::is_base_of_v<rmm::bad_alloc, rmm::out_of_memory>);
  static_assert(std::is_base_of_v<std::logic_error, rmm::logic_error>);
  static_assert(std::is_base_of_v<std::runtime_error, rmm::cuda_error>);
  // RMM's marker first, which code written for RMM looks for; reason() is the message alone.
  EXPECT_STREQ(rmm::out_of_memory{"m"}.what(), "out_of_memory: m");
  EXPECT_EQ(rmm::out_of_memory{"m"}.reason(), "m");
  EXPECT_STREQ(rmm::bad_alloc{"b"}.what(), "b");
  EXPECT_EQ(rmm::bad_alloc{std::string{"b"}}.reason(), "b");
}

TEST(AssertCudaSuccess, ReportsThroughTheDebugLogAndClearsTheError)
{
  testing::internal::CaptureStderr();
  RMM_ASSERT_CUDA_SUCCESS(cudaSetDevice(9999));
  auto const output = testing::internal::GetCapturedStderr();
  EXPECT_THAT(output, HasSubstr("cudaSetDevice(9999)"));
  EXPECT_THAT(output, HasSubstr("[error]"));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(FormatBytes, BinaryUnits)
{
  using rmm::format_bytes;
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(std::size_t{8} << 30), "8.00 GiB");
  EXPECT_EQ(format_bytes(std::size_t{1} << 50), "1.00 PiB");
}

TEST(FormatBytes, ExactFormsCarryEveryByte)
{
  EXPECT_EQ(rmm::format_bytes_exact(12), "12 B");
  EXPECT_EQ(rmm::format_bytes_exact(2048), "2.00 KiB (2048 bytes)");
  EXPECT_EQ(rmm::format_bytes_exact(~std::size_t{0}), "16.00 EiB (18446744073709551615 bytes)");
  EXPECT_EQ(rmm::format_bytes_short(100), "100 B");
  EXPECT_EQ(rmm::format_bytes_short(std::size_t{512} << 20), "512 MiB");
  EXPECT_EQ(rmm::format_bytes_short(std::size_t{1536} << 20), "1.50 GiB (1610612736 bytes)");
  EXPECT_EQ(rmm::format_bytes_short((std::size_t{3} << 30) / 2 + 1), "1.50 GiB (1610612737 bytes)");
}

}  // namespace
