// SPDX-License-Identifier: Apache-2.0
#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/callback_memory_resource.hpp>

namespace rmm::mr {

struct callback_memory_resource::callbacks {
  allocate_callback_t allocate;
  deallocate_callback_t deallocate;
  void* allocate_arg;
  void* deallocate_arg;
};

callback_memory_resource::callback_memory_resource(allocate_callback_t allocate_callback,
                                                   deallocate_callback_t deallocate_callback,
                                                   void* allocate_callback_arg,
                                                   void* deallocate_callback_arg)
{
  RMM_EXPECTS(static_cast<bool>(allocate_callback), "callback_memory_resource: the allocate callback is empty");
  RMM_EXPECTS(static_cast<bool>(deallocate_callback), "callback_memory_resource: the deallocate callback is empty");
  callbacks_ = std::make_shared<callbacks const>(callbacks{std::move(allocate_callback), std::move(deallocate_callback),
                                                           allocate_callback_arg, deallocate_callback_arg});
}

void* callback_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  void* ptr = callbacks_->allocate(bytes, stream, callbacks_->allocate_arg);
  if (ptr == nullptr && bytes > 0) {
    throw rmm::bad_alloc{"callback_memory_resource: the allocate callback returned null for " +
                         rmm::format_bytes_exact(bytes)};
  }
  return ptr;
}

void callback_memory_resource::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  callbacks_->deallocate(ptr, bytes, stream, callbacks_->deallocate_arg);
}

bool callback_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* callback = dynamic_cast<callback_memory_resource const*>(&other);
  return callback != nullptr && callback->callbacks_ == callbacks_;
}

}  // namespace rmm::mr
