#pragma once

#include <rmm/aligned.hpp>
#include <rmm/mr/detail/resource_vtable.hpp>

#include <cstddef>

namespace rmm::mr::detail {

/// The resource interface of a type-erased handle (resource_ref, any_resource), forwarded
/// through its vtable: the stream-ordered methods of the RMM documentation and CCCL 3.0.1's
/// spelling. `Handle` provides erased_object() and erased_vtable().
template <class Handle>
class erased_resource_methods {
 public:
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    return vtable().allocate(object(), stream, bytes, alignment);
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    vtable().deallocate(object(), stream, ptr, bytes, alignment);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    return vtable().allocate_sync(object(), bytes, alignment);
  }
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    vtable().deallocate_sync(object(), ptr, bytes, alignment);
  }

  // CCCL 3.0.1 spelling, so cuda::mr::async_resource_ref can hold an rmm handle.
  void* allocate(std::size_t bytes, std::size_t alignment) { return allocate_sync(bytes, alignment); }
  void deallocate(void* ptr, std::size_t bytes, std::size_t alignment) noexcept
  {
    deallocate_sync(ptr, bytes, alignment);
  }
  void* allocate_async(std::size_t bytes, std::size_t alignment, cuda::stream_ref stream)
  {
    return allocate(stream, bytes, alignment);
  }
  void deallocate_async(void* ptr, std::size_t bytes, std::size_t alignment, cuda::stream_ref stream) noexcept
  {
    deallocate(stream, ptr, bytes, alignment);
  }

 protected:
  erased_resource_methods() = default;

 private:
  [[nodiscard]] void* object() const noexcept { return static_cast<Handle const&>(*this).erased_object(); }
  [[nodiscard]] resource_vtable const& vtable() const noexcept
  {
    return *static_cast<Handle const&>(*this).erased_vtable();
  }
};

}  // namespace rmm::mr::detail
