// The type-erased handles: resource_ref (non-owning), any_resource (owning, shared), their
// property rules, equality, and interop with CCCL 3.0.1's cuda::mr::async_resource_ref.

#include <rmm/mr/cuda_memory_resource.hpp>
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

/// A resource written against CCCL 3.0.1's async_resource concept only.
class cccl_style_resource {
 public:
  void* allocate(std::size_t bytes, std::size_t) { return std::malloc(bytes == 0 ? 1 : bytes); }
  void deallocate(void* ptr, std::size_t, std::size_t) { std::free(ptr); }
  void* allocate_async(std::size_t bytes, std::size_t alignment, cuda::stream_ref)
  {
    ++async_calls;
    return allocate(bytes, alignment);
  }
  void deallocate_async(void* ptr, std::size_t bytes, std::size_t alignment, cuda::stream_ref)
  {
    ++async_calls;
    deallocate(ptr, bytes, alignment);
  }
  bool operator==(cccl_style_resource const&) const { return true; }
  friend void get_property(cccl_style_resource const&, cuda::mr::device_accessible) noexcept {}
  int async_calls{0};
};

using host_device_ref = rmm::host_device_async_resource_ref;
using device_ref      = rmm::device_async_resource_ref;
using any_device      = rmm::mr::any_device_resource;
using any_host_device = rmm::mr::any_resource<cuda::mr::host_accessible, cuda::mr::device_accessible>;

// Properties: fewer may be dropped, never gained.
static_assert(std::is_convertible_v<host_device_ref, device_ref>);
static_assert(!std::is_convertible_v<device_ref, host_device_ref>);
static_assert(std::is_convertible_v<rmm::mr::managed_memory_resource&, host_device_ref>);
static_assert(!std::is_convertible_v<rmm::mr::cuda_memory_resource&, host_device_ref>);
static_assert(std::is_convertible_v<rmm::mr::cuda_memory_resource&, device_ref>);
static_assert(std::is_convertible_v<any_host_device const&, any_device>);
static_assert(!std::is_convertible_v<any_device const&, any_host_device>);
// A reference can only be taken from an lvalue: a temporary would dangle.
static_assert(!std::is_convertible_v<rmm::mr::cuda_memory_resource&&, device_ref>);
static_assert(!std::is_convertible_v<any_device&&, device_ref>);
static_assert(std::is_convertible_v<any_device&, device_ref>);
// The handles are resources themselves, also in CCCL 3.0.1's sense.
static_assert(rmm::mr::async_resource_with<device_ref, cuda::mr::device_accessible>);
static_assert(rmm::mr::async_resource_with<any_device, cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<device_ref, cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<rmm::mr::cuda_memory_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<rmm::mr::managed_memory_resource, cuda::mr::host_accessible>);

TEST(ResourceRef, ForwardsToTheReferencedResource)
{
  counting_resource res;
  device_ref ref{res};
  rmm::cuda_stream_view const stream{reinterpret_cast<cudaStream_t>(0x1234)};
  void* ptr = ref.allocate(stream, 16);
  EXPECT_EQ(res.stats().allocations, 1);
  EXPECT_EQ(res.stats().last_stream, stream.value());
  ref.deallocate(stream, ptr, 16);
  EXPECT_EQ(res.stats().deallocations, 1);
  ptr = ref.allocate_sync(8);
  ref.deallocate_sync(ptr, 8);
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
  // Seen through the base class, a resource still equals itself and its equals.
  rmm::mr::device_memory_resource& base = cuda_a;
  EXPECT_TRUE(device_ref{base} == device_ref{cuda_b});
}

TEST(ResourceRef, DropsPropertiesButKeepsTheObject)
{
  counting_resource res;
  host_device_ref both{res};
  device_ref device_only = both;
  void* ptr              = device_only.allocate_sync(4);
  both.deallocate_sync(ptr, 4);
  EXPECT_EQ(res.stats().allocations, 1);
  EXPECT_EQ(res.stats().deallocations, 1);
  EXPECT_TRUE(device_only == device_ref{res});
}

TEST(ResourceRef, TargetRecoversTheConcreteType)
{
  counting_resource res;
  device_ref ref{res};
  EXPECT_EQ(ref.target<counting_resource>(), &res);
  EXPECT_EQ(ref.target<cccl_style_resource>(), nullptr);
  rmm::mr::cuda_memory_resource cuda;
  device_ref cuda_ref{cuda};
  EXPECT_EQ(cuda_ref.target<rmm::mr::cuda_memory_resource>(), &cuda);
  EXPECT_EQ(cuda_ref.target<rmm::mr::managed_memory_resource>(), nullptr);
}

TEST(ResourceRef, HoldsCccl301StyleResources)
{
  cccl_style_resource res;
  device_ref ref{res};
  void* ptr = ref.allocate(rmm::cuda_stream_view{}, 32);
  ref.deallocate(rmm::cuda_stream_view{}, ptr, 32);
  EXPECT_EQ(res.async_calls, 2);
}

TEST(ResourceRef, CcclAsyncResourceRefCanHoldRmmHandles)
{
  counting_resource res;
  device_ref ref{res};
  cuda::mr::async_resource_ref<cuda::mr::device_accessible> cccl{ref};
  void* ptr = cccl.allocate_async(64, 256, cuda::stream_ref{cudaStream_t{}});
  cccl.deallocate_async(ptr, 64, 256, cuda::stream_ref{cudaStream_t{}});
  EXPECT_EQ(res.stats().allocations, 1);
  EXPECT_EQ(res.stats().deallocations, 1);
}

TEST(AnyResource, OwnsASharedCopy)
{
  counting_resource res;
  {
    any_device owning{res};
    EXPECT_TRUE(owning.is_owning());
    EXPECT_EQ(res.use_count(), 2) << "the any_resource holds a copy sharing the state";
    any_device copy = owning;
    EXPECT_EQ(res.use_count(), 2) << "copies of an any_resource share the held object";
    void* ptr = copy.allocate(rmm::cuda_stream_view{}, 8);
    owning.deallocate(rmm::cuda_stream_view{}, ptr, 8);
    EXPECT_TRUE(copy == owning);
    EXPECT_EQ(res.stats().allocations, 1);
  }
  EXPECT_EQ(res.use_count(), 1);
}

TEST(AnyResource, KeepsATemporaryAlive)
{
  any_device owning = [] { return any_device{counting_resource{}}; }();
  void* ptr         = owning.allocate_sync(8);
  owning.deallocate_sync(ptr, 8);
  EXPECT_NE(owning.target<counting_resource>(), nullptr);
  EXPECT_EQ(owning.target<counting_resource>()->stats().allocations, 1);
}

TEST(AnyResource, FromAReferenceDoesNotOwn)
{
  counting_resource res;
  any_device held{device_ref{res}};
  EXPECT_FALSE(held.is_owning());
  EXPECT_EQ(res.use_count(), 1);
  EXPECT_EQ(held.target<counting_resource>(), &res) << "no wrapper around the reference";
  EXPECT_TRUE(held == any_device{res});
}

TEST(AnyResource, MovedFromStaysUsable)
{
  counting_resource res;
  any_device a{res};
  any_device b{std::move(a)};
  void* ptr = a.allocate_sync(4);  // NOLINT: moving copies, by design
  b.deallocate_sync(ptr, 4);
  EXPECT_EQ(res.stats().deallocations, 1);
}

TEST(AnyResource, ConvertsToAReferenceToTheHeldObject)
{
  any_device owning{counting_resource{}};
  device_ref ref = owning;
  EXPECT_EQ(ref.target<counting_resource>(), owning.target<counting_resource>());
  EXPECT_TRUE(ref == owning.ref());
}

TEST(AnyResource, DeviceMemoryResourceHierarchy)
{
  any_device owning{rmm::mr::cuda_memory_resource{}};
  EXPECT_NE(owning.target<rmm::mr::cuda_memory_resource>(), nullptr);
  EXPECT_NE(owning.target<rmm::mr::device_memory_resource>(), nullptr);
  EXPECT_EQ(owning.target<rmm::mr::managed_memory_resource>(), nullptr);
  EXPECT_TRUE(owning == any_device{rmm::mr::cuda_memory_resource{}});
}

}  // namespace
