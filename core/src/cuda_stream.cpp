// SPDX-License-Identifier: Apache-2.0
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

#include "mr/detail/stream_identity.hpp"

#include <ostream>

namespace rmm {

// ---- cuda_stream_view ---------------------------------------------------------------------------

void cuda_stream_view::synchronize() const { RMM_CUDA_TRY(cudaStreamSynchronize(stream_)); }

void cuda_stream_view::synchronize_no_throw() const noexcept
{
  RMM_ASSERT_CUDA_SUCCESS(cudaStreamSynchronize(stream_));
}

std::ostream& operator<<(std::ostream& os, cuda_stream_view stream)
{
  return os << static_cast<void const*>(stream.value());
}

// ---- cuda_stream --------------------------------------------------------------------------------

cuda_stream::cuda_stream(flags stream_flags)
{
  cudaStream_t stream{};
  RMM_CUDA_TRY(cudaStreamCreateWithFlags(&stream, static_cast<unsigned int>(stream_flags)));
  stream_.reset(stream);
  // The library sees this stream's whole life: its identity is asked once, not per operation.
  mr::detail::remember_stream(stream);
}

void cuda_stream::stream_deleter::operator()(CUstream_st* stream) const noexcept
{
  // Forgotten first: once destroyed, its handle may name the next stream created.
  mr::detail::forget_stream(stream);
  // Work still queued on the stream completes; CUDA releases the stream afterwards.
  RMM_ASSERT_CUDA_SUCCESS(cudaStreamDestroy(stream));
}

// ---- cuda_stream_pool ---------------------------------------------------------------------------

cuda_stream_pool::cuda_stream_pool(std::size_t pool_size, cuda_stream::flags flags)
{
  RMM_EXPECTS(pool_size > 0, "cuda_stream_pool needs at least one stream (pool_size was 0)");
  streams_.reserve(pool_size);
  for (std::size_t i = 0; i < pool_size; ++i) { streams_.emplace_back(flags); }
}

cuda_stream_view cuda_stream_pool::get_stream() const noexcept
{
  return streams_[next_.fetch_add(1, std::memory_order_relaxed) % streams_.size()].view();
}

cuda_stream_view cuda_stream_pool::get_stream(std::size_t stream_id) const noexcept
{
  return streams_[stream_id % streams_.size()].view();
}

}  // namespace rmm
