// SPDX-License-Identifier: Apache-2.0
// Memory of cuda_async_memory_resource can be used by the hardware decompression engine, as
// cudaMalloc memory can: its pool is made with the decompress usage where the driver knows it.

#include <rmm/cuda_stream.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

namespace rmm::test {
namespace {

bool decompress_capable(void* ptr)
{
  // Through the runtime's entry-point lookup: the test links no libcuda of its own.
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  EXPECT_EQ(cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &entry, 4000, cudaEnableDefault, &found),
            cudaSuccess);
  if (entry == nullptr) { return false; }
  bool capable = false;
  EXPECT_EQ(reinterpret_cast<PFN_cuPointerGetAttribute_v4000>(entry)(
              &capable, CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, reinterpret_cast<CUdeviceptr>(ptr)),
            CUDA_SUCCESS);
  return capable;
}

TEST(CudaAsyncDecompress, PoolMemoryIsDecompressCapableLikeCudaMallocMemory)
{
  ASSERT_TRUE(rmm::detail::hwdecompress::is_supported()) << "the driver predates hardware decompression";
  rmm::mr::cuda_memory_resource plain;
  void* p = plain.allocate_sync(100);
  EXPECT_TRUE(decompress_capable(p));
  plain.deallocate_sync(p, 100);

  rmm::mr::cuda_async_memory_resource async{};
  rmm::cuda_stream stream;
  void* q = async.allocate(stream.view(), 100);
  stream.synchronize();
  EXPECT_TRUE(decompress_capable(q));
  async.deallocate(stream.view(), q, 100);
  stream.synchronize();
}

}  // namespace
}  // namespace rmm::test
