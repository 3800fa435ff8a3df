#pragma once

#include <rmm/mr/resource_ref.hpp>

#include <memory>
#include <type_traits>
#include <utility>

namespace rmm::mr {

/**
 * Owning, shared, type-erased memory resource with the compile-time `Properties`: rmm's
 * equivalent of cuda::mr::any_resource<Properties...> (CCCL >= 3.1), which CCCL 3.0.1 lacks.
 *
 * Constructing from a resource object stores a copy (resources with state share it between
 * copies, so this is cheap and keeps the state alive). Constructing from a resource_ref stores
 * the reference itself, without ownership and without allocating. Copies share the held object.
 * An lvalue any_resource converts to a resource_ref that is valid while any copy lives.
 */
template <class... Properties>
class any_resource : public detail::erased_resource_methods<any_resource<Properties...>>,
                     public detail::with_property<Properties>... {
 public:
  /**
   * @brief Holds a copy of `resource`, shared by the copies of this any_resource.
   *
   * @param resource a copyable resource with every one of `Properties`
   */
  // Copyability is asserted, not constrained: as a constraint it would recurse for resources
  // whose constructor takes an any_resource (checking the copy constructor considers that one).
  template <class Resource, class Decayed = std::remove_cvref_t<Resource>>
  requires(!detail::is_type_erased_resource_v<Decayed> && async_resource_with<Decayed, Properties...>)
    any_resource(Resource&& resource)  // NOLINT: implicit, like CCCL's any_resource
  {
    static_assert(std::is_copy_constructible_v<Decayed>,
                  "any_resource holds a copy of the resource: pass a copyable resource, or a resource_ref to it");
    auto owner = std::make_shared<Decayed>(std::forward<Resource>(resource));
    vtable_    = detail::erased_vtable<Decayed>();
    object_    = std::shared_ptr<void>{owner, detail::erased_object(owner.get())};
  }

  /**
   * @brief Holds `ref` without owning what it refers to.
   *
   * @param ref a reference with at least `Properties`; the resource must outlive every copy
   */
  template <class... RefProperties>
  requires(detail::contains_property_v<Properties, RefProperties...>&&...)
    any_resource(resource_ref<RefProperties...> ref)
  noexcept  // NOLINT
    : object_{std::shared_ptr<void>{}, ref.object_}, vtable_{ref.vtable_}
  {
  }

  /**
   * @brief From an any_resource with more properties; shares its object.
   *
   * @param other the any_resource to share with
   */
  template <class... OtherProperties>
  requires((detail::contains_property_v<Properties, OtherProperties...> && ...) &&
           !std::is_same_v<any_resource<OtherProperties...>, any_resource>)
    any_resource(any_resource<OtherProperties...> const& other)
  noexcept  // NOLINT
    : object_{other.object_}, vtable_{other.vtable_}
  {
  }

  // Moving copies, so an any_resource is never empty.
  /// @brief Default copy constructor: the copy shares the held resource
  any_resource(any_resource const&) noexcept = default;
  /**
   * @brief Move constructor: copies, so that `other` still holds its resource
   *
   * @param other the any_resource to share with
   */
  any_resource(any_resource&& other) noexcept : any_resource(std::as_const(other)) {}
  /**
   * @brief Default copy assignment operator: this object shares the held resource afterwards
   *
   * @return a reference to this object
   */
  any_resource& operator=(any_resource const&) noexcept = default;
  /**
   * @brief Move assignment operator: copies, so that `other` still holds its resource
   *
   * @param other the any_resource to share with
   * @return a reference to this object
   */
  any_resource& operator=(any_resource&& other) noexcept { return *this = std::as_const(other); }
  ~any_resource() = default;

  /// @brief A non-owning reference to the held resource, valid while this any_resource or a copy
  /// of it lives; lvalues only.
  template <class... RefProperties>
  requires(detail::contains_property_v<RefProperties, Properties...>&&...) operator resource_ref<RefProperties...>()
    const& noexcept  // NOLINT
  {
    return resource_ref<RefProperties...>{object_.get(), vtable_};
  }
  /// Converting a temporary any_resource to a reference would dangle once it is the last owner.
  template <class... RefProperties>
  operator resource_ref<RefProperties...>() const&& = delete;

  /**
   * @brief Whether this any_resource (with its copies) owns the held resource.
   *
   * @return false when constructed from a resource_ref (the referenced resource is owned elsewhere)
   */
  [[nodiscard]] bool is_owning() const noexcept { return object_.use_count() > 0; }

  /**
   * @brief A non-owning reference to the held resource.
   *
   * @return a reference valid while this any_resource or a copy of it lives
   */
  [[nodiscard]] resource_ref<Properties...> ref() const noexcept { return *this; }

  /**
   * @brief Whether the held resources are the same object, or of one type and equal.
   *
   * @param lhs an any_resource
   * @param rhs the any_resource to compare with
   * @return true when the held resources can free each other's memory
   */
  friend bool operator==(any_resource const& lhs, any_resource const& rhs) noexcept
  {
    return detail::erased_equal(lhs.object_.get(), lhs.vtable_, rhs.object_.get(), rhs.vtable_);
  }

  /**
   * @brief The held resource if it is a `Resource` (see resource_ref::target).
   *
   * @return a pointer to the resource, or nullptr
   */
  template <class Resource>
  [[nodiscard]] Resource* target() const noexcept
  {
    return ref().template target<Resource>();
  }

 private:
  template <class...>
  friend class any_resource;
  friend class detail::erased_resource_methods<any_resource>;

  [[nodiscard]] void* erased_object() const noexcept { return object_.get(); }
  [[nodiscard]] detail::resource_vtable const* erased_vtable() const noexcept { return vtable_; }

  std::shared_ptr<void> object_;  // owns the resource, or aliases a referenced one without owning
  detail::resource_vtable const* vtable_{};
};

}  // namespace rmm::mr
