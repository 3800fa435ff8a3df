// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>

#include <atomic>
#include <cstddef>
#include <vector>

namespace rmm {

/// A fixed set of streams handed out round-robin: cheaper than creating streams on the fly. With
/// more callers than streams, several callers share a stream.
class cuda_stream_pool {
 public:
  static constexpr std::size_t default_size{16};  ///< the number of streams of a default-constructed pool

  /**
   * @brief Creates `pool_size` streams on the current device.
   *
   * @param pool_size the number of streams, at least 1
   * @param flags the flags of every stream
   * @throws rmm::logic_error when `pool_size` is 0
   * @throws rmm::cuda_error when CUDA cannot create a stream
   */
  explicit cuda_stream_pool(std::size_t pool_size    = default_size,
                            cuda_stream::flags flags = cuda_stream::flags::sync_default);
  ~cuda_stream_pool()                                  = default;
  cuda_stream_pool(cuda_stream_pool&&)                 = delete;
  cuda_stream_pool(cuda_stream_pool const&)            = delete;
  cuda_stream_pool& operator=(cuda_stream_pool&&)      = delete;
  cuda_stream_pool& operator=(cuda_stream_pool const&) = delete;

  /**
   * @brief The next stream, round-robin. Thread-safe.
   *
   * @return a view of one of the pool's streams, valid while the pool lives
   */
  [[nodiscard]] cuda_stream_view get_stream() const noexcept;
  /**
   * @brief The stream at `stream_id` modulo the pool size, so equal ids give equal streams.
   *
   * @param stream_id any number
   * @return a view of one of the pool's streams, valid while the pool lives
   */
  [[nodiscard]] cuda_stream_view get_stream(std::size_t stream_id) const noexcept;
  /**
   * @brief The number of streams in the pool.
   *
   * @return the pool size
   */
  [[nodiscard]] std::size_t get_pool_size() const noexcept { return streams_.size(); }

 private:
  std::vector<cuda_stream> streams_;
  mutable std::atomic<std::size_t> next_{0};
};

}  // namespace rmm
