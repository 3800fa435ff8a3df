// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>  // RMM_CUDA_TRY, where code written for RMM finds it

#include <cuda_runtime_api.h>

#include <memory>

namespace rmm {

/// Owning, move-only CUDA stream: created by the constructor, destroyed by the destructor. Never
/// the default or per-thread default stream.
class cuda_stream {
 public:
  /// How the stream synchronizes with the legacy default stream (cudaStreamCreateWithFlags flags).
  enum class flags : unsigned int {
    sync_default = cudaStreamDefault,      ///< synchronizes with the legacy default stream
    non_blocking = cudaStreamNonBlocking,  ///< runs concurrently with the legacy default stream
  };

  /**
   * @brief Creates a stream on the current device.
   *
   * @param stream_flags whether the stream synchronizes with the legacy default stream
   * @throws rmm::cuda_error when CUDA cannot create the stream
   */
  explicit cuda_stream(flags stream_flags = flags::sync_default);

  /// @brief Default move constructor; the moved-from object owns no stream
  cuda_stream(cuda_stream&&) noexcept = default;
  /**
   * @brief Default move assignment operator; destroys the stream this object owned, and the
   * moved-from object owns no stream
   *
   * @return a reference to this object
   */
  cuda_stream& operator=(cuda_stream&&) noexcept = default;
  cuda_stream(cuda_stream const&)                = delete;
  cuda_stream& operator=(cuda_stream const&)     = delete;
  ~cuda_stream()                                 = default;

  /**
   * @brief Whether the object owns a stream.
   *
   * @return false only for a moved-from stream
   */
  [[nodiscard]] bool is_valid() const noexcept { return stream_ != nullptr; }
  /**
   * @brief The CUDA stream handle.
   *
   * @return the handle; null for a moved-from stream
   */
  [[nodiscard]] cudaStream_t value() const noexcept { return stream_.get(); }
  /// @brief Implicit conversion to the CUDA stream handle, as value()
  operator cudaStream_t() const noexcept { return value(); }  // NOLINT
  /**
   * @brief A non-owning view of the stream, valid while this object owns it.
   *
   * @return the view
   */
  [[nodiscard]] cuda_stream_view view() const noexcept { return cuda_stream_view{value()}; }
  /// @brief Implicit conversion to a non-owning view, as view()
  operator cuda_stream_view() const noexcept { return view(); }  // NOLINT
  /// @brief Implicit conversion to a cuda::stream_ref of the stream
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref{value()}; }  // NOLINT

  /**
   * @brief Waits for all work on the stream.
   *
   * @throws rmm::cuda_error when the synchronization fails
   */
  void synchronize() const { view().synchronize(); }
  /// @brief Waits for all work on the stream; reports failures through the debug log.
  void synchronize_no_throw() const noexcept { view().synchronize_no_throw(); }

 private:
  struct stream_deleter {
    void operator()(CUstream_st* stream) const noexcept;
  };
  std::unique_ptr<CUstream_st, stream_deleter> stream_;
};

}  // namespace rmm
