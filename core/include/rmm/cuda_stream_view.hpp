// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <iosfwd>

namespace rmm {

/// Non-owning view of a CUDA stream. Converts to and from cudaStream_t and cuda::stream_ref.
class cuda_stream_view {
 public:
  constexpr cuda_stream_view() noexcept = default;
  /**
   * @brief Views `stream`.
   *
   * @param stream the stream handle; not owned
   */
  constexpr cuda_stream_view(cudaStream_t stream) noexcept : stream_{stream} {}  // NOLINT: implicit on purpose
  /**
   * @brief Views the stream `stream` refers to.
   *
   * @param stream the stream reference; not owned
   */
  constexpr cuda_stream_view(cuda::stream_ref stream) noexcept : stream_{stream.get()} {}  // NOLINT
  // A literal 0 or nullptr is ambiguous between "legacy default" and "no stream"; say cuda_stream_default.
  cuda_stream_view(int)            = delete;
  cuda_stream_view(std::nullptr_t) = delete;

  /**
   * @brief The viewed stream's handle.
   *
   * @return the handle (0 for the default-constructed view)
   */
  [[nodiscard]] constexpr cudaStream_t value() const noexcept { return stream_; }
  /**
   * @brief Implicit conversion to the stream handle.
   *
   * @return value()
   */
  constexpr operator cudaStream_t() const noexcept { return stream_; }  // NOLINT
  /**
   * @brief Implicit conversion to a cuda::stream_ref of the viewed stream.
   *
   * @return a reference to the viewed stream
   */
  constexpr operator cuda::stream_ref() const noexcept { return cuda::stream_ref{stream_}; }  // NOLINT

  // Inline on purpose: what stream 0 means depends on how the *caller* is compiled.

  /**
   * @brief Whether the view is the per-thread default stream.
   *
   * @return true for cudaStreamPerThread (and for stream 0 when compiled with per-thread default
   * streams)
   */
  [[nodiscard]] bool is_per_thread_default() const noexcept
  {
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    return value() == cudaStreamPerThread || value() == nullptr;
#else
    return value() == cudaStreamPerThread;
#endif
  }
  /**
   * @brief Whether the view is the legacy default stream.
   *
   * @return true for cudaStreamLegacy, and for 0 unless compiled with per-thread default streams
   */
  [[nodiscard]] bool is_default() const noexcept
  {
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    return value() == cudaStreamLegacy;
#else
    return value() == cudaStreamLegacy || value() == nullptr;
#endif
  }

  /**
   * @brief Waits for all work on the stream.
   *
   * @throws rmm::cuda_error when the synchronization fails
   */
  void synchronize() const;
  /// @brief Waits for all work on the stream; reports failures through the debug log.
  void synchronize_no_throw() const noexcept;

 private:
  cudaStream_t stream_{};
};

/// The default stream (handle 0): the legacy default stream unless the program uses per-thread ones.
inline constexpr cuda_stream_view cuda_stream_default{};
/// The device's legacy default stream (cudaStreamLegacy), which synchronizes with blocking streams.
inline cuda_stream_view const cuda_stream_legacy{cudaStreamLegacy};
/// The calling thread's default stream (cudaStreamPerThread).
inline cuda_stream_view const cuda_stream_per_thread{cudaStreamPerThread};

/**
 * @brief Whether two views name the same stream handle.
 *
 * @param lhs one view
 * @param rhs the other
 * @return true when their handles are equal
 */
[[nodiscard]] constexpr bool operator==(cuda_stream_view lhs, cuda_stream_view rhs) noexcept
{
  return lhs.value() == rhs.value();
}

/**
 * @brief Writes the stream's handle (as a pointer) to `os`.
 *
 * @param os the stream to write to
 * @param stream the view to print
 * @return `os`
 */
std::ostream& operator<<(std::ostream& os, cuda_stream_view stream);

}  // namespace rmm
