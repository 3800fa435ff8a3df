// SPDX-License-Identifier: Apache-2.0
#include "detail/stream_ordered_suballocator.hpp"

#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/detail/suballocator_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

namespace rmm::mr::detail {

template <class Derived, class FreeStore>
device_async_resource_ref suballocator_resource<Derived, FreeStore>::get_upstream_resource() const noexcept
{
  return engine_->upstream();
}

template <class Derived, class FreeStore>
suballocator_statistics suballocator_resource<Derived, FreeStore>::statistics() const
{
  return engine_->statistics();
}

template <class Derived, class FreeStore>
void suballocator_resource<Derived, FreeStore>::release_mapped_memory_after_reset() noexcept
{
  engine_->release_mapped_memory_after_reset();
}

template <class Derived, class FreeStore>
bool suballocator_resource<Derived, FreeStore>::can_pause() const noexcept
{
  return engine_->can_pause();
}

template <class Derived, class FreeStore>
auto suballocator_resource<Derived, FreeStore>::pause_device_memory(bool discard) -> paused_memory
{
  auto const done = engine_->pause(discard);
  return {done.device_bytes, done.saved_bytes, done.staged};
}

template <class Derived, class FreeStore>
void suballocator_resource<Derived, FreeStore>::resume_device_memory(bool keep_host_memory)
{
  engine_->resume(keep_host_memory);
}

template <class Derived, class FreeStore>
std::size_t suballocator_resource<Derived, FreeStore>::kept_host_bytes() const
{
  return engine_->kept_host_bytes();
}

template <class Derived, class FreeStore>
std::size_t suballocator_resource<Derived, FreeStore>::staging_host_bytes() const
{
  return engine_->staging_host_bytes();
}

template <class Derived, class FreeStore>
std::size_t suballocator_resource<Derived, FreeStore>::release_kept_host_memory()
{
  return engine_->release_kept_host_memory();
}

template <class Derived, class FreeStore>
bool suballocator_resource<Derived, FreeStore>::paused() const noexcept
{
  return engine_->paused();
}

template <class Derived, class FreeStore>
void* suballocator_resource<Derived, FreeStore>::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return engine_->allocate(bytes, stream);
}

template <class Derived, class FreeStore>
void suballocator_resource<Derived, FreeStore>::do_deallocate(void* ptr,
                                                              std::size_t bytes,
                                                              cuda_stream_view stream) noexcept
{
  engine_->deallocate(ptr, bytes, stream);
}

template <class Derived, class FreeStore>
void* suballocator_resource<Derived, FreeStore>::do_allocate_sync(std::size_t bytes)
{
  return engine_->allocate_sync(bytes);
}

template <class Derived, class FreeStore>
void suballocator_resource<Derived, FreeStore>::do_deallocate_sync(void* ptr, std::size_t bytes) noexcept
{
  engine_->deallocate_sync(ptr, bytes);
}

template <class Derived, class FreeStore>
bool suballocator_resource<Derived, FreeStore>::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* same_kind = dynamic_cast<Derived const*>(&other);
  return same_kind != nullptr && same_kind->engine_ == engine_;
}

template class suballocator_resource<pool_memory_resource, coalescing_free_list>;
template class suballocator_resource<arena_memory_resource, coalescing_free_list>;
template class suballocator_resource<fixed_size_memory_resource, fixed_block_store>;

}  // namespace rmm::mr::detail
