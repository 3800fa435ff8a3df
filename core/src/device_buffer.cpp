// SPDX-License-Identifier: Apache-2.0
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace rmm {

device_buffer::device_buffer() : mr_{mr::get_current_device_resource()}, device_{get_current_cuda_device()} {}

namespace {
std::size_t checked_alignment(std::size_t alignment)
{
  RMM_EXPECTS(is_supported_alignment(alignment),
              "device_buffer: alignment " + std::to_string(alignment) + " is not a power of two",
              rmm::invalid_argument);
  return alignment;
}

std::size_t checked_source_size(void const* source_data, std::size_t size)
{
  RMM_EXPECTS(source_data != nullptr || size == 0, "device_buffer: source_data is null but size is not 0");
  return size;
}
}  // namespace

device_buffer::device_buffer(std::size_t size, cuda_stream_view stream, mr::any_device_resource mr)
  : device_buffer{size, CUDA_ALLOCATION_ALIGNMENT, stream, std::move(mr)}
{
}

device_buffer::device_buffer(std::size_t size,
                             std::size_t alignment,
                             cuda_stream_view stream,
                             mr::any_device_resource mr)
  : alignment_{checked_alignment(alignment)}, stream_{stream}, mr_{std::move(mr)}, device_{get_current_cuda_device()}
{
  allocate(size);
}

device_buffer::device_buffer(void const* source_data,
                             std::size_t size,
                             cuda_stream_view stream,
                             mr::any_device_resource mr)
  : device_buffer{source_data, size, CUDA_ALLOCATION_ALIGNMENT, stream, std::move(mr)}
{
}

device_buffer::device_buffer(void const* source_data,
                             std::size_t size,
                             std::size_t alignment,
                             cuda_stream_view stream,
                             mr::any_device_resource mr)
  : device_buffer{checked_source_size(source_data, size), alignment, stream, std::move(mr)}
{
  // Constructed by the delegation: if the copy throws, the destructor frees the memory.
  copy_from(source_data, size);
}

device_buffer::device_buffer(device_buffer const& other, cuda_stream_view stream, mr::any_device_resource mr)
  : device_buffer{other.data(), other.size(), other.alignment(), stream, std::move(mr)}
{
}

device_buffer::device_buffer(device_buffer&& other) noexcept
  : data_{std::exchange(other.data_, nullptr)},
    size_{std::exchange(other.size_, 0)},
    capacity_{std::exchange(other.capacity_, 0)},
    alignment_{std::exchange(other.alignment_, 1)},  // a moved-from buffer is reset as in RMM
    stream_{std::exchange(other.stream_, cuda_stream_view{})},
    mr_{other.mr_},
    device_{other.device_}
{
}

device_buffer& device_buffer::operator=(device_buffer&& other) noexcept
{
  if (this != &other) {
    deallocate();
    data_      = std::exchange(other.data_, nullptr);
    size_      = std::exchange(other.size_, 0);
    capacity_  = std::exchange(other.capacity_, 0);
    alignment_ = std::exchange(other.alignment_, 1);
    stream_    = std::exchange(other.stream_, cuda_stream_view{});
    mr_        = other.mr_;
    device_    = other.device_;
  }
  return *this;
}

device_buffer::~device_buffer() noexcept { deallocate(); }

void device_buffer::reserve(std::size_t new_capacity, cuda_stream_view stream)
{
  set_stream(stream);
  if (new_capacity > capacity_) { reallocate(new_capacity); }
}

void device_buffer::resize(std::size_t new_size, cuda_stream_view stream)
{
  set_stream(stream);
  if (new_size > capacity_) { reallocate(new_size); }
  size_ = new_size;
}

void device_buffer::shrink_to_fit(cuda_stream_view stream)
{
  set_stream(stream);
  if (size_ != capacity_) { reallocate(size_); }
}

// allocate and copy_from run only in constructors, where device_ is the current device: no switch.
// An empty buffer asks its resource for nothing, as RMM's: it holds no memory, whatever its
// alignment (which is checked when it first grows).
void device_buffer::allocate(std::size_t bytes)
{
  data_     = bytes == 0 ? nullptr : mr_.allocate(stream_, bytes, alignment_);
  size_     = bytes;
  capacity_ = bytes;
}

void device_buffer::deallocate() noexcept
{
  if (data_ == nullptr && capacity_ == 0) { return; }
  try {
    cuda_set_device_raii const on_device{device_};
    mr_.deallocate(stream_, data_, capacity_, alignment_);
  } catch (rmm::cuda_error const&) {
    // Switching device failed (the runtime is unloading at exit): the memory is reclaimed with
    // the process, and a destructor must not throw.
  }
  data_     = nullptr;
  size_     = 0;
  capacity_ = 0;
}

void device_buffer::copy_from(void const* source, std::size_t bytes)
{
  if (bytes == 0) { return; }
  RMM_CUDA_TRY(cudaMemcpyAsync(data_, source, bytes, cudaMemcpyDefault, stream_.value()));
}

void device_buffer::reallocate(std::size_t new_capacity)
{
  cuda_set_device_raii const on_device{device_};
  void* new_data  = new_capacity == 0 ? nullptr : mr_.allocate(stream_, new_capacity, alignment_);
  auto const keep = std::min(size_, new_capacity);
  if (keep > 0) {
    auto const status = cudaMemcpyAsync(new_data, data_, keep, cudaMemcpyDefault, stream_.value());
    if (status != cudaSuccess) {
      mr_.deallocate(stream_, new_data, new_capacity, alignment_);
      RMM_CUDA_TRY(status);
    }
  }
  // An empty buffer (default-constructed, moved from, released) has nothing to give back.
  if (data_ != nullptr || capacity_ != 0) { mr_.deallocate(stream_, data_, capacity_, alignment_); }
  data_     = new_data;
  capacity_ = new_capacity;
  size_     = keep;
}

}  // namespace rmm
