// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/mr/detail/cccl.hpp>

namespace rmm::mr::detail {

/**
 * The resource a cuda::mr::resource_ref or any_resource holds, if it is exactly a `Resource`.
 *
 * CCCL keeps the held type's identity but offers no public way to ask for it; this is the one place
 * that uses its internal cast, so a CCCL update touches nothing else.
 *
 * Like the handles' own allocate(), this hands out the held resource whether or not the handle is
 * const: a handle's constness is not the resource's.
 *
 * @return a pointer to the held resource, or nullptr when it is of another type
 */
template <class Resource, class Handle>
[[nodiscard]] Resource* resource_cast(Handle const& handle) noexcept
{
  return ::cuda::__any_cast<Resource>(const_cast<Handle*>(&handle));
}

}  // namespace rmm::mr::detail
