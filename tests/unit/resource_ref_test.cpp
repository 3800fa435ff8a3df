// SPDX-License-Identifier: Apache-2.0
// The type-erased handles rmm's interface is made of, CCCL's resource_ref (non-owning) and
// any_resource (owning), as rmm's resources and a user's own resource meet them: property rules,
// equality, copies, and the concrete type recovered.

#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/detail/resource_cast.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <type_traits>

namespace {

/// A host-memory resource with shared counters, written against rmm's stream-first interface
/// without deriving from device_memory_resource.
class counting_resource {
 public:
  struct counters {
    int allocations{0};
    int deallocations{0};
    cudaStream_t last_stream{};
  };

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    ++state_->allocations;
    state_->last_stream = stream.get();
    return std::malloc(bytes == 0 ? 1 : bytes);
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t,
                  std::size_t = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    ++state_->deallocations;
    state_->last_stream = stream.get();
    std::free(ptr);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    return allocate(cuda::stream_ref{cudaStream_t{}}, bytes, alignment);
  }
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    deallocate(cuda::stream_ref{cudaStream_t{}}, ptr, bytes, alignment);
  }
  friend bool operator==(counting_resource const& a, counting_resource const& b) { return a.state_ == b.state_; }
  friend void get_property(counting_resource const&, cuda::mr::device_accessible) noexcept {}
  friend void get_property(counting_resource const&, cuda::mr::host_accessible) noexcept {}

  [[nodiscard]] counters const& stats() const { return *state_; }
  [[nodiscard]] long use_count() const { return state_.use_count(); }

 private:
  std::shared_ptr<counters> state_ = std::make_shared<counters>();
};

using host_device_ref = rmm::host_device_async_resource_ref;
using device_ref      = rmm::device_async_resource_ref;
using any_device      = rmm::mr::any_device_resource;
using any_host_device = rmm::mr::any_resource<cuda::mr::host_accessible, cuda::mr::device_accessible>;

constexpr std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT;

// The handles are CCCL's own types.
static_assert(std::is_same_v<device_ref, cuda::mr::resource_ref<cuda::mr::device_accessible>>);
static_assert(std::is_same_v<any_device, cuda::mr::any_resource<cuda::mr::device_accessible>>);
static_assert(
  std::is_same_v<rmm::device_resource_ref, cuda::mr::synchronous_resource_ref<cuda::mr::device_accessible>>);
// Properties: fewer may be dropped, never gained.
static_assert(std::is_convertible_v<host_device_ref, device_ref>);
static_assert(!std::is_convertible_v<device_ref, host_device_ref>);
static_assert(std::is_convertible_v<rmm::mr::managed_memory_resource&, host_device_ref>);
static_assert(!std::is_convertible_v<rmm::mr::cuda_memory_resource&, host_device_ref>);
static_assert(std::is_convertible_v<rmm::mr::cuda_memory_resource&, device_ref>);
static_assert(std::is_convertible_v<device_ref, rmm::device_resource_ref>);
// A user's resource written to the documented interface satisfies CCCL's concept, as rmm's do.
static_assert(cuda::mr::resource_with<counting_resource, cuda::mr::device_accessible, cuda::mr::host_accessible>);
static_assert(cuda::mr::resource_with<rmm::mr::cuda_memory_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<rmm::mr::managed_memory_resource, cuda::mr::host_accessible>);
static_assert(cuda::mr::synchronous_resource_with<rmm::mr::cuda_memory_resource, cuda::mr::device_accessible>);

TEST(ResourceRef, ForwardsToTheReferencedResource)
{
  counting_resource res;
  device_ref ref{res};
  rmm::cuda_stream_view const stream{reinterpret_cast<cudaStream_t>(0x1234)};
  void* ptr = ref.allocate(stream, 16, alignment);
  EXPECT_EQ(res.stats().allocations, 1);
  EXPECT_EQ(res.stats().last_stream, stream.value());
  ref.deallocate(stream, ptr, 16, alignment);
  EXPECT_EQ(res.stats().deallocations, 1);
  ptr = ref.allocate_sync(8, alignment);
  ref.deallocate_sync(ptr, 8, alignment);
  EXPECT_EQ(res.stats().allocations, 2);
  EXPECT_EQ(res.use_count(), 1) << "a reference must not share ownership";
}

TEST(ResourceRef, EqualityComparesTheResources)
{
  counting_resource a;
  counting_resource a_copy = a;  // shares a's state: equal
  counting_resource b;
  EXPECT_TRUE(device_ref{a} == device_ref{a_copy});
  EXPECT_FALSE(device_ref{a} == device_ref{b});
  rmm::mr::cuda_memory_resource cuda_a;
  rmm::mr::cuda_memory_resource cuda_b;
  EXPECT_TRUE(device_ref{cuda_a} == device_ref{cuda_b});
  EXPECT_FALSE(device_ref{cuda_a} == device_ref{a});
}

TEST(ResourceRef, DropsPropertiesButKeepsTheObject)
{
  counting_resource res;
  host_device_ref both{res};
  device_ref device_only = both;
  void* ptr              = device_only.allocate_sync(4, alignment);
  both.deallocate_sync(ptr, 4, alignment);
  EXPECT_EQ(res.stats().allocations, 1);
  EXPECT_EQ(res.stats().deallocations, 1);
  EXPECT_TRUE(device_only == device_ref{res});
}

TEST(ResourceRef, CastRecoversTheConcreteType)
{
  using rmm::mr::detail::resource_cast;
  counting_resource res;
  device_ref ref{res};
  EXPECT_EQ(resource_cast<counting_resource>(ref), &res);
  EXPECT_EQ(resource_cast<rmm::mr::cuda_memory_resource>(ref), nullptr);
  rmm::mr::cuda_memory_resource cuda;
  device_ref cuda_ref{cuda};
  EXPECT_EQ(resource_cast<rmm::mr::cuda_memory_resource>(cuda_ref), &cuda);
  EXPECT_EQ(resource_cast<rmm::mr::managed_memory_resource>(cuda_ref), nullptr);
}

TEST(AnyResource, OwnsACopySharingTheState)
{
  counting_resource res;
  {
    any_device owning{res};
    EXPECT_EQ(res.use_count(), 2) << "the any_resource holds a copy sharing the state";
    any_device copy = owning;
    EXPECT_EQ(res.use_count(), 3) << "a copy of an any_resource copies the held resource";
    void* ptr = copy.allocate(rmm::cuda_stream_view{}, 8, alignment);
    owning.deallocate(rmm::cuda_stream_view{}, ptr, 8, alignment);
    EXPECT_TRUE(copy == owning);
    EXPECT_EQ(res.stats().allocations, 1);
    EXPECT_EQ(res.stats().deallocations, 1);
  }
  EXPECT_EQ(res.use_count(), 1);
}

TEST(AnyResource, KeepsATemporaryAlive)
{
  any_device owning = [] { return any_device{counting_resource{}}; }();
  void* ptr         = owning.allocate_sync(8, alignment);
  owning.deallocate_sync(ptr, 8, alignment);
  auto const* held = rmm::mr::detail::resource_cast<counting_resource>(owning);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->stats().allocations, 1);
}

TEST(AnyResource, FromAReferenceCopiesTheResource)
{
  counting_resource res;
  any_device held{device_ref{res}};
  EXPECT_EQ(res.use_count(), 2) << "a copy of the referenced resource, sharing its state";
  EXPECT_NE(rmm::mr::detail::resource_cast<counting_resource>(held), &res);
  EXPECT_TRUE(held == any_device{res});
}

TEST(AnyResource, ConvertsToAReferenceToTheHeldObject)
{
  any_device owning{counting_resource{}};
  device_ref ref = owning;
  EXPECT_EQ(rmm::mr::detail::resource_cast<counting_resource>(ref),
            rmm::mr::detail::resource_cast<counting_resource>(owning));
}

TEST(AnyResource, HoldsRmmResourcesByTheirOwnType)
{
  any_device owning{rmm::mr::cuda_memory_resource{}};
  EXPECT_NE(rmm::mr::detail::resource_cast<rmm::mr::cuda_memory_resource>(owning), nullptr);
  EXPECT_EQ(rmm::mr::detail::resource_cast<rmm::mr::managed_memory_resource>(owning), nullptr);
  EXPECT_TRUE(owning == any_device{rmm::mr::cuda_memory_resource{}});
  EXPECT_FALSE(owning == any_device{rmm::mr::managed_memory_resource{}});
}

}  // namespace
