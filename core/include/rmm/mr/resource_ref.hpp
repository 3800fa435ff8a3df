#pragma once

#include <rmm/aligned.hpp>
#include <rmm/mr/detail/erased_resource_methods.hpp>
#include <rmm/mr/detail/resource_concepts.hpp>
#include <rmm/mr/detail/resource_vtable.hpp>

#include <cstddef>
#include <memory>
#include <type_traits>

namespace rmm::mr {

template <class... Properties>
class any_resource;
template <class... Properties>
class resource_ref;

namespace detail {
template <class T>
inline constexpr bool is_type_erased_resource_v = false;
template <class... P>
inline constexpr bool is_type_erased_resource_v<resource_ref<P...>> = true;
template <class... P>
inline constexpr bool is_type_erased_resource_v<any_resource<P...>> = true;

template <class Property, class... Properties>
inline constexpr bool contains_property_v = (std::is_same_v<Property, Properties> || ...);
}  // namespace detail

/**
 * Non-owning, type-erased reference to a stream-ordered memory resource with the compile-time
 * `Properties` (cuda::mr::device_accessible, cuda::mr::host_accessible). Plays the role of CCCL
 * >= 3.1's cuda::mr::resource_ref, which CCCL 3.0.1 lacks in this form. The referenced resource
 * must outlive the reference. A reference converts to one with fewer properties.
 */
template <class... Properties>
class resource_ref : public detail::erased_resource_methods<resource_ref<Properties...>>,
                     public detail::with_property<Properties>... {
 public:
  /**
   * @brief Refers to `resource`.
   *
   * @param resource a resource with every one of `Properties`; must outlive the reference
   */
  template <class Resource>
  requires(!detail::is_type_erased_resource_v<std::remove_cv_t<Resource>> &&
           async_resource_with<Resource, Properties...>) resource_ref(Resource& resource)
  noexcept  // NOLINT: implicit, like CCCL's resource_ref
    : object_{detail::erased_object(std::addressof(resource))}, vtable_{detail::erased_vtable<Resource>()}
  {
  }

  /**
   * @brief Refers to `*resource`.
   *
   * @param resource a non-null pointer to a resource with every one of `Properties`; the resource
   * must outlive the reference
   */
  template <class Resource>
  requires(!detail::is_type_erased_resource_v<std::remove_cv_t<Resource>> &&
           async_resource_with<Resource, Properties...>) resource_ref(Resource* resource)
  noexcept  // NOLINT
    : resource_ref{*resource}
  {
  }

  /**
   * @brief From a reference with more properties, to the same resource.
   *
   * @param other the reference to copy
   */
  template <class... OtherProperties>
  requires((detail::contains_property_v<Properties, OtherProperties...> && ...) &&
           !std::is_same_v<resource_ref<OtherProperties...>, resource_ref>)
    resource_ref(resource_ref<OtherProperties...> other)
  noexcept  // NOLINT
    : object_{other.object_}, vtable_{other.vtable_}
  {
  }

  /// True when both refer to resources that can free each other's memory.
  friend bool operator==(resource_ref const& lhs, resource_ref const& rhs) noexcept
  {
    return detail::erased_equal(lhs.object_, lhs.vtable_, rhs.object_, rhs.vtable_);
  }

  /**
   * @brief The referenced resource if it is a `Resource`.
   *
   * For classes derived from device_memory_resource, ask for the class itself: the check uses
   * dynamic_cast.
   *
   * @return a pointer to the resource, or nullptr
   */
  template <class Resource>
  [[nodiscard]] Resource* target() const noexcept
  {
    if constexpr (std::is_base_of_v<device_memory_resource, Resource>) {
      if (vtable_ != detail::erased_vtable<device_memory_resource>()) { return nullptr; }
      return dynamic_cast<Resource*>(static_cast<device_memory_resource*>(object_));
    } else {
      return vtable_->type() == typeid(Resource) ? static_cast<Resource*>(object_) : nullptr;
    }
  }

 private:
  template <class...>
  friend class resource_ref;
  template <class...>
  friend class any_resource;
  friend class detail::erased_resource_methods<resource_ref>;

  [[nodiscard]] void* erased_object() const noexcept { return object_; }
  [[nodiscard]] detail::resource_vtable const* erased_vtable() const noexcept { return vtable_; }

  resource_ref(void* object, detail::resource_vtable const* vtable) noexcept : object_{object}, vtable_{vtable} {}

  void* object_;
  detail::resource_vtable const* vtable_;
};

}  // namespace rmm::mr
