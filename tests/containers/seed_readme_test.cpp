// SPDX-License-Identifier: Apache-2.0
// The C++ examples of the RMM README (../shared/seeds/rmm-readme.txt) that launch no kernels, as
// written there, each followed by checks of what the README says it does. The kernel-launching
// examples are in seed_readme_kernels_test.cu (label gpu); the logging adaptor's in
// seed_readme_logging_test.cpp.

#include "backend.hpp"
#include "device_memory.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/mr/detail/resource_cast.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

namespace {

using rmm::cuda_device_id;  // the README's per-device loop names it unqualified

class SeedReadme : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  void TearDown() override
  {
    for (int i = 0; i < rmm::test::device_count(); ++i) { (void)rmm::mr::reset_per_device_resource(cuda_device_id{i}); }
    RMM_CUDA_TRY(cudaSetDevice(0));
  }
};

// "A device memory resource ... provides stream-ordered allocation and deallocation":
//   void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT);
//   void deallocate(cuda::stream_ref stream, void* ptr, std::size_t bytes, std::size_t alignment = ...) noexcept;
TEST_F(SeedReadme, ResourceInterface)
{
  rmm::mr::cuda_memory_resource resource;
  rmm::cuda_stream stream;
  cuda::stream_ref stream_ref = stream;
  void* ptr                   = resource.allocate(stream_ref, 1000);
  EXPECT_TRUE(rmm::is_pointer_aligned(ptr, rmm::CUDA_ALLOCATION_ALIGNMENT));
  static_assert(noexcept(resource.deallocate(stream_ref, ptr, 1000)));
  resource.deallocate(stream_ref, ptr, 1000);
  rmm::device_async_resource_ref ref = resource;  // "a lightweight non-owning reference"
  ptr                                = ref.allocate(stream_ref, 64, 64);
  ref.deallocate(stream_ref, ptr, 64, 64);
}

// "A common example is configuring a pool_memory_resource to use for all allocations."
TEST_F(SeedReadme, PoolAsTheCurrentDeviceResource)
{
  rmm::mr::cuda_memory_resource cuda_mr;
  // Construct a resource that uses a coalescing best-fit pool allocator
  // With the pool initially half of available device memory
  auto initial_size = rmm::percent_of_free_device_memory(50);
  rmm::mr::pool_memory_resource pool_mr{cuda_mr, initial_size};
  auto previous = rmm::mr::set_current_device_resource(pool_mr);
  auto mr       = rmm::mr::get_current_device_resource_ref();

  EXPECT_TRUE(mr == rmm::device_async_resource_ref{pool_mr});
  EXPECT_GE(pool_mr.pool_size(), initial_size);
  EXPECT_TRUE(rmm::mr::detail::resource_cast<rmm::mr::cuda_memory_resource>(previous) != nullptr)
    << "the initial resource";
  rmm::device_buffer buffer{1 << 20, rmm::cuda_stream_default};  // from the pool now
  EXPECT_EQ(pool_mr.statistics().allocated_bytes, std::size_t{1} << 20);
}

// "Here is an example loop that creates pool_memory_resource objects for each device and sets
// them as the per-device resource for that device."
TEST_F(SeedReadme, PerDeviceLoop)
{
  int const N = rmm::test::device_count();
  for (int i = 0; i < N; ++i) {
    cudaSetDevice(i);  // set device i before creating MR
    auto initial_size = rmm::percent_of_free_device_memory(50);
    rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, initial_size};
    // Set the per-device resource for device i
    set_per_device_resource(cuda_device_id{i}, pool);
  }

  // Each device now allocates from its own pool, which lives on in the per-device table.
  for (int i = 0; i < N; ++i) {
    RMM_CUDA_TRY(cudaSetDevice(i));
    auto* pool = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(
      rmm::mr::get_per_device_resource_ref(cuda_device_id{i}));
    ASSERT_NE(pool, nullptr) << "device " << i;
    rmm::device_buffer buffer{4096, rmm::cuda_stream_default};
    EXPECT_EQ(pool->statistics().allocated_bytes, 4096U) << "device " << i;
    cudaPointerAttributes attributes{};
    RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, buffer.data()));
    EXPECT_EQ(attributes.device, i);
  }
}

// "Here is an incorrect example that creates a memory resource on device 0 and then uses it to
// allocate a device_buffer on device 1." Using a resource on another device is undefined behaviour
// in general; cuda_memory_resource keeps no per-device state, so running it is harmless and shows
// the mistake: the buffer belongs to device 1, not to the resource's device 0.
TEST_F(SeedReadme, IncorrectMultiDeviceExampleUsesDevice1)
{
  if (rmm::test::device_count() < 2) {
    GTEST_SKIP() << "needs two devices, this host has " << rmm::test::device_count();
  }
  {
    RMM_CUDA_TRY(cudaSetDevice(0));
    auto mr = rmm::mr::cuda_memory_resource{};
    {
      RMM_CUDA_TRY(cudaSetDevice(1));
      // Invalid, current device is 1, but MR is only valid for device 0
      rmm::device_buffer buf(16, rmm::cuda_stream_default, mr);
      EXPECT_EQ(buf.device().value(), 1);
    }
  }
}

// "A correct example creates the device buffer with device 0 active. After that it is safe to
// switch devices and let the buffer go out of scope and destruct with a different device active."
TEST_F(SeedReadme, CorrectMultiDeviceExample)
{
  if (rmm::test::device_count() < 2) {
    GTEST_SKIP() << "needs two devices, this host has " << rmm::test::device_count();
  }
  void* data = nullptr;
  {
    RMM_CUDA_TRY(cudaSetDevice(0));
    auto mr = rmm::mr::cuda_memory_resource{};
    rmm::device_buffer buf(16, rmm::cuda_stream_default, mr);
    RMM_CUDA_TRY(cudaSetDevice(1));
    data = buf.data();
    // No need to switch back to device 0 before ~buf runs
  }
  EXPECT_EQ(rmm::get_current_cuda_device().value(), 1) << "the destructor restored the current device";
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, data) == cudaSuccess) {
    EXPECT_NE(attributes.type, cudaMemoryTypeDevice) << "the buffer's memory was freed";
  }
  (void)cudaGetLastError();
}

// "rmm::mr::polymorphic_allocator ... stream_allocator_adaptor" example.
TEST_F(SeedReadme, StreamAllocatorAdaptor)
{
  rmm::cuda_stream stream;
  rmm::mr::polymorphic_allocator<int> stream_alloc;

  // Constructs an adaptor that forwards all (de)allocations to `stream_alloc` on `stream`.
  auto adapted = rmm::mr::stream_allocator_adaptor(stream_alloc, stream);

  // Allocates storage for 100 ints using `stream_alloc` on `stream`
  auto p = adapted.allocate(100);
  // (the README's "...": use the memory on `stream`)
  rmm::test::write_tag(p, 100 * sizeof(int), 0x42, stream);
  EXPECT_TRUE(rmm::test::has_tag(p, 100 * sizeof(int), 0x42, stream));
  // Deallocates using `stream_alloc` on `stream`
  adapted.deallocate(p, 100);

  EXPECT_EQ(adapted.stream(), stream.view());
}

// device_buffer example, without its kernel (that part is in seed_readme_kernels_test.cu).
TEST_F(SeedReadme, DeviceBuffer)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view s{stream};
  // Allocates at least 100 bytes on stream `s` using the *default* resource
  rmm::device_buffer b{100, s};
  void* p = b.data();  // Raw, untyped pointer to underlying device memory
  EXPECT_NE(p, nullptr);
  EXPECT_GE(b.size(), 100U);
  EXPECT_TRUE(b.memory_resource() == rmm::mr::get_current_device_resource_ref());

  rmm::mr::cuda_memory_resource mr;
  // Allocates at least 100 bytes on stream `s` using the resource `mr`
  rmm::device_buffer b2{100, s, mr};
  EXPECT_GE(b2.size(), 100U);
  EXPECT_TRUE(b2.memory_resource() == rmm::device_async_resource_ref{mr});
}

// device_uvector example without thrust::uninitialized_fill (in seed_readme_kernels_test.cu).
TEST_F(SeedReadme, DeviceUvector)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view s{stream};
  // Allocates uninitialized storage for 100 `int32_t` elements on stream `s` using the
  // default resource
  rmm::device_uvector<int32_t> v(100, s);
  EXPECT_EQ(v.size(), 100U);

  rmm::mr::cuda_memory_resource mr;
  // Allocates uninitialized storage for 100 `int32_t` elements on stream `s` using the resource `mr`
  rmm::device_uvector<int32_t> v2{100, s, mr};
  EXPECT_EQ(v2.size(), 100U);
  EXPECT_TRUE(v2.memory_resource() == rmm::device_async_resource_ref{mr});
}

// device_scalar example without its kernel (in seed_readme_kernels_test.cu).
TEST_F(SeedReadme, DeviceScalar)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view s{stream};
  // Allocates uninitialized storage for a single `int32_t` in device memory
  rmm::device_scalar<int32_t> a{s};
  a.set_value(42, s);  // Updates the value in device memory to `42` on stream `s`

  int32_t v = a.value(s);  // Retrieves the value from device to host on stream `s`
  EXPECT_EQ(v, 42);
}

// "rmm::cuda_stream_pool provides fast access to a pool of CUDA streams ... The size of the pool is
// configurable. Depending on this size, multiple calls to cuda_stream_pool::get_stream() may
// return instances of rmm::cuda_stream_view that represent identical CUDA streams."
TEST_F(SeedReadme, StreamPool)
{
  rmm::cuda_stream_pool pool{4};
  EXPECT_EQ(pool.get_pool_size(), 4U);
  std::set<cudaStream_t> seen;
  for (int i = 0; i < 8; ++i) {
    rmm::cuda_stream_view stream = pool.get_stream();
    EXPECT_FALSE(stream.is_default());
    EXPECT_FALSE(stream.is_per_thread_default());
    seen.insert(stream.value());
    rmm::device_uvector<int> work(1000, stream);  // stream-ordered work on a pooled stream
    work.set_element(0, i, stream);
    EXPECT_EQ(work.front_element(stream), i);
  }
  EXPECT_EQ(seen.size(), 4U) << "8 calls on a pool of 4 share its 4 streams";
  EXPECT_EQ(pool.get_stream(1), pool.get_stream(5)) << "stream ids wrap around the pool";
}

// The Python-interop example, verbatim: a C++ function returning a device_buffer takes an owning,
// type-erased resource.
// clang-format off
std::unique_ptr<rmm::device_buffer> allocate(
  std::size_t size,
  cuda::mr::any_resource<cuda::mr::device_accessible> mr =
    rmm::mr::get_current_device_resource_ref())
{
    return std::make_unique<rmm::device_buffer>(size, rmm::cuda_stream_default, std::move(mr));
}
// clang-format on

TEST_F(SeedReadme, FunctionTakingAnOwningResource)
{
  auto with_default = allocate(128);
  EXPECT_EQ(with_default->size(), 128U);
  EXPECT_TRUE(with_default->memory_resource() == rmm::mr::get_current_device_resource_ref());

  // A resource passed by value lives as long as the buffer needs it.
  auto from_pool = allocate(4096, rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 1 << 20});
  auto* pool     = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(from_pool->memory_resource());
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->statistics().allocated_bytes, 4096U);
}

}  // namespace
