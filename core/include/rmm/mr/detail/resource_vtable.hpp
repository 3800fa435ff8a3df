#pragma once

#include <rmm/mr/detail/resource_concepts.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>
#include <type_traits>
#include <typeinfo>

namespace rmm::mr::detail {

/// The operations rmm's type-erased resources dispatch through: one static table per resource type.
struct resource_vtable {
  void* (*allocate)(void* object, cuda::stream_ref stream, std::size_t bytes, std::size_t alignment);
  void (
    *deallocate)(void* object, cuda::stream_ref stream, void* ptr, std::size_t bytes, std::size_t alignment) noexcept;
  void* (*allocate_sync)(void* object, std::size_t bytes, std::size_t alignment);
  void (*deallocate_sync)(void* object, void* ptr, std::size_t bytes, std::size_t alignment) noexcept;
  /// Compares two objects whose `type()` is equal.
  bool (*equal)(void const* lhs, void const* rhs) noexcept;
  std::type_info const& (*type)() noexcept;
};

template <class Resource>
struct vtable_builder {
  static void* allocate(void* object, cuda::stream_ref stream, std::size_t bytes, std::size_t alignment)
  {
    auto& res = *static_cast<Resource*>(object);
    if constexpr (stream_ordered_resource<Resource>) {
      return res.allocate(stream, bytes, alignment);
    } else {
      return res.allocate_async(bytes, alignment, stream);
    }
  }
  static void deallocate(void* object,
                         cuda::stream_ref stream,
                         void* ptr,
                         std::size_t bytes,
                         std::size_t alignment) noexcept
  {
    auto& res = *static_cast<Resource*>(object);
    if constexpr (stream_ordered_resource<Resource>) {
      res.deallocate(stream, ptr, bytes, alignment);
    } else {
      res.deallocate_async(ptr, bytes, alignment, stream);
    }
  }
  static void* allocate_sync(void* object, std::size_t bytes, std::size_t alignment)
  {
    auto& res = *static_cast<Resource*>(object);
    if constexpr (stream_ordered_resource<Resource>) {
      return res.allocate_sync(bytes, alignment);
    } else {
      return res.allocate(bytes, alignment);
    }
  }
  static void deallocate_sync(void* object, void* ptr, std::size_t bytes, std::size_t alignment) noexcept
  {
    auto& res = *static_cast<Resource*>(object);
    if constexpr (stream_ordered_resource<Resource>) {
      res.deallocate_sync(ptr, bytes, alignment);
    } else {
      res.deallocate(ptr, bytes, alignment);
    }
  }
  static bool equal(void const* lhs, void const* rhs) noexcept
  {
    return *static_cast<Resource const*>(lhs) == *static_cast<Resource const*>(rhs);
  }
  static std::type_info const& type() noexcept { return typeid(Resource); }
};

template <class Resource>
inline constexpr resource_vtable vtable_for{
  &vtable_builder<Resource>::allocate,      &vtable_builder<Resource>::deallocate,
  &vtable_builder<Resource>::allocate_sync, &vtable_builder<Resource>::deallocate_sync,
  &vtable_builder<Resource>::equal,         &vtable_builder<Resource>::type};

/// Resources derived from device_memory_resource are all erased as device_memory_resource: one
/// table dispatching through the virtual interface, and equality decided by is_equal() across the
/// whole hierarchy (a pool seen through a base reference still equals the pool).
template <class Resource>
using erased_type_t =
  std::conditional_t<std::is_base_of_v<device_memory_resource, Resource>, device_memory_resource, Resource>;

template <class Resource>
[[nodiscard]] void* erased_object(Resource* res) noexcept
{
  return static_cast<void*>(static_cast<erased_type_t<Resource>*>(res));
}

template <class Resource>
[[nodiscard]] resource_vtable const* erased_vtable() noexcept
{
  return &vtable_for<erased_type_t<Resource>>;
}

/// Equality of two type-erased resources: same object, or same type and equal.
[[nodiscard]] inline bool erased_equal(void const* lhs_object,
                                       resource_vtable const* lhs_vtable,
                                       void const* rhs_object,
                                       resource_vtable const* rhs_vtable) noexcept
{
  if (lhs_object == rhs_object) { return true; }
  if (lhs_vtable != rhs_vtable && lhs_vtable->type() != rhs_vtable->type()) { return false; }
  return lhs_vtable->equal(lhs_object, rhs_object);
}

/// Gives a type-erased resource the compile-time property `Property` (found by ADL through the base).
template <class Property>
struct with_property {
  friend void get_property(with_property const&, Property) noexcept {}
};

}  // namespace rmm::mr::detail
