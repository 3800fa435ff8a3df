// SPDX-License-Identifier: Apache-2.0
#pragma once

// Copies between device memory and pageable host memory through a few page-locked staging
// buffers, the device's copies and the host's overlapping: the way a paused pool's contents go to
// the host and back. The two plain ways are slower: page-locked memory as large as the contents
// takes the driver longer to make (about 1.5 GB/s, measured on an H100 host) than the copy itself,
// and the driver's own copies to and from pageable memory run at a fifth of the link's speed.

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rmm::mr::detail {

/// One contiguous piece to copy: `bytes` at device address `device` and at host address `host`.
struct host_piece {
  std::uintptr_t device;
  unsigned char* host;
  std::size_t bytes;
};

class staged_copier {
 public:
  /// Page-locked staging buffers and a stream of its own on the device whose context is current
  /// (here and at every call). Throws rmm::out_of_memory when the staging buffers cannot be had,
  /// rmm::cuda_error when the stream cannot be made.
  staged_copier();
  ~staged_copier();
  staged_copier(staged_copier const&)            = delete;
  staged_copier& operator=(staged_copier const&) = delete;

  /// Copies every piece from the device to the host; returns once all are there. No queued work
  /// may write the device's side meanwhile. Throws rmm::cuda_error when a copy fails.
  void to_host(std::vector<host_piece> const& pieces);
  /// Copies every piece from the host to the device; returns once all are there.
  void to_device(std::vector<host_piece> const& pieces);

  /// Page-locked host memory the staging buffers hold, in bytes.
  [[nodiscard]] std::size_t staging_bytes() const noexcept { return staging_.size() * chunk_bytes; }

  /// Bytes of one staging buffer: the pieces are copied in chunks of this size at most.
  static constexpr std::size_t chunk_bytes = std::size_t{16} << 20;

 private:
  /// The pieces cut into chunks of at most chunk_bytes.
  [[nodiscard]] static std::vector<host_piece> split(std::vector<host_piece> const& pieces);
  class host_workers;

  CUstream stream_{};
  std::vector<unsigned char*> staging_;
  std::vector<CUevent> copied_;  ///< per staging buffer: its last device copy finished
  unsigned threads_;
};

}  // namespace rmm::mr::detail
