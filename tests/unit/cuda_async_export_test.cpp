// SPDX-License-Identifier: Apache-2.0
// cuda_async_memory_resource's export handle types: a pool is made exportable only with handle
// types the device's pools support, every one of a combination.

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace rmm::test {
namespace {

using handle_type = rmm::mr::cuda_async_memory_resource::allocation_handle_type;

int supported_handle_types()
{
  int supported{};
  EXPECT_EQ(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolSupportedHandleTypes,
                                   rmm::get_current_cuda_device().value()),
            cudaSuccess);
  return supported;
}

TEST(CudaAsyncExport, EveryHandleTypeOfACombinationMustBeSupported)
{
  auto const supported = supported_handle_types();
  for (std::int32_t bits : {0x1, 0x2, 0x8, 0x1 | 0x8, 0x1 | 0x2}) {
    SCOPED_TRACE(bits);
    auto const make = [bits] {
      return rmm::mr::cuda_async_memory_resource{std::nullopt, std::nullopt, static_cast<handle_type>(bits)};
    };
    if ((supported & bits) == bits) {
      EXPECT_NO_THROW((void)make());
    } else {
      EXPECT_THROW((void)make(), rmm::logic_error) << "the device's pools support " << supported;
    }
  }
}

}  // namespace
}  // namespace rmm::test
