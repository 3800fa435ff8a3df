#pragma once

#include <rmm/mr/detail/cccl.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>

namespace rmm::mr {

/// A resource with the stream-ordered interface of the RMM documentation (and of CCCL >= 3.1):
/// allocate(stream, bytes, alignment), deallocate(stream, ptr, bytes, alignment), their _sync
/// forms, and equality.
// The member checks come first: they reject non-resources before equality_comparable asks for
// operator==, whose overload set includes the type-erased resources' converting constructors.
template <class Resource>
concept stream_ordered_resource =
  requires(Resource& res, cuda::stream_ref stream, void* ptr, std::size_t bytes, std::size_t alignment)
{
  {
    res.allocate(stream, bytes, alignment)
    } -> std::same_as<void*>;
  {
    res.deallocate(stream, ptr, bytes, alignment)
    } -> std::same_as<void>;
  {
    res.allocate_sync(bytes, alignment)
    } -> std::same_as<void*>;
  {
    res.deallocate_sync(ptr, bytes, alignment)
    } -> std::same_as<void>;
}
&&std::equality_comparable<Resource>;

/// A resource written against CCCL 3.0.1's cuda::mr::async_resource (allocate_async/deallocate_async).
template <class Resource>
concept cccl_async_resource = cuda::mr::async_resource<Resource>;

/// Anything rmm's type-erased resource_ref / any_resource can hold, with `Properties`.
template <class Resource, class... Properties>
concept async_resource_with = (stream_ordered_resource<Resource> ||
                               cccl_async_resource<Resource>)&&(cuda::has_property<Resource, Properties>&&...);

}  // namespace rmm::mr
