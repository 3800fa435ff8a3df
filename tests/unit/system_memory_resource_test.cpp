// SPDX-License-Identifier: Apache-2.0
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(SystemMemoryResource, ConstructsExactlyWhenTheDeviceHasPageableMemoryAccess)
{
  RMM_CUDA_TRY(cudaSetDevice(0));
  int pageable{};
  RMM_CUDA_TRY(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0));
  EXPECT_EQ(rmm::mr::is_system_memory_supported(rmm::cuda_device_id{0}), pageable != 0);
  if (pageable != 0) {
    rmm::mr::system_memory_resource mr;
    void* ptr                   = mr.allocate_sync(64);
    static_cast<char*>(ptr)[63] = 1;  // host-accessible
    mr.deallocate_sync(ptr, 64);
  } else {
    try {
      rmm::mr::system_memory_resource mr;
      FAIL() << "constructed without pageable memory access";
    } catch (rmm::logic_error const& e) {
      EXPECT_NE(std::string{e.what()}.find("cudaDevAttrPageableMemoryAccess = 0"), std::string::npos) << e.what();
      EXPECT_NE(std::string{e.what()}.find("managed_memory_resource"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
