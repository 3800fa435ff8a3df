#pragma once

#include <rmm/cuda_stream_view.hpp>

#include <cuda_runtime_api.h>

#include <memory>

namespace rmm {

/// Owning, move-only CUDA stream: created by the constructor, destroyed by the destructor. Never
/// the default or per-thread default stream.
class cuda_stream {
 public:
  enum class flags : unsigned int {
    sync_default = cudaStreamDefault,      ///< synchronizes with the legacy default stream
    non_blocking = cudaStreamNonBlocking,  ///< runs concurrently with the legacy default stream
  };

  /// Creates a stream on the current device. Throws rmm::cuda_error on failure.
  explicit cuda_stream(flags stream_flags = flags::sync_default);

  cuda_stream(cuda_stream&&) noexcept            = default;
  cuda_stream& operator=(cuda_stream&&) noexcept = default;
  cuda_stream(cuda_stream const&)                = delete;
  cuda_stream& operator=(cuda_stream const&)     = delete;
  ~cuda_stream()                                 = default;

  /// False only for a moved-from stream.
  [[nodiscard]] bool is_valid() const noexcept { return stream_ != nullptr; }
  [[nodiscard]] cudaStream_t value() const noexcept { return stream_.get(); }
  operator cudaStream_t() const noexcept { return value(); }  // NOLINT
  [[nodiscard]] cuda_stream_view view() const noexcept { return cuda_stream_view{value()}; }
  operator cuda_stream_view() const noexcept { return view(); }                     // NOLINT
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref{value()}; }  // NOLINT

  void synchronize() const { view().synchronize(); }
  void synchronize_no_throw() const noexcept { view().synchronize_no_throw(); }

 private:
  struct stream_deleter {
    void operator()(CUstream_st* stream) const noexcept;
  };
  std::unique_ptr<CUstream_st, stream_deleter> stream_;
};

}  // namespace rmm
