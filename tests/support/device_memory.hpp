// SPDX-License-Identifier: Apache-2.0
#pragma once

// Helpers that read and write memory the way any CUDA client can without launching kernels
// (cudaMemset / cudaMemcpy), so tests using them run on the emulator and on a GPU alike.

#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rmm::test {

/// Fills the first and last (up to) 4 KiB of [ptr, ptr + bytes) with `tag`, on `stream`. Large
/// allocations are probed at both ends so a wrong size shows without touching every page.
inline void write_tag(void* ptr, std::size_t bytes, std::uint8_t tag, rmm::cuda_stream_view stream)
{
  if (bytes == 0) { return; }
  auto const edge = std::min<std::size_t>(bytes, 4096);
  auto* bytes_ptr = static_cast<std::uint8_t*>(ptr);
  RMM_CUDA_TRY(cudaMemsetAsync(bytes_ptr, tag, edge, stream.value()));
  RMM_CUDA_TRY(cudaMemsetAsync(bytes_ptr + bytes - edge, tag, edge, stream.value()));
}

/// True when both ends written by write_tag still hold `tag`. Synchronizes `stream`.
[[nodiscard]] inline bool has_tag(void const* ptr, std::size_t bytes, std::uint8_t tag, rmm::cuda_stream_view stream)
{
  if (bytes == 0) { return true; }
  auto const edge = std::min<std::size_t>(bytes, 4096);
  std::vector<std::uint8_t> head(edge);
  std::vector<std::uint8_t> tail(edge);
  auto const* bytes_ptr = static_cast<std::uint8_t const*>(ptr);
  RMM_CUDA_TRY(cudaMemcpyAsync(head.data(), bytes_ptr, edge, cudaMemcpyDefault, stream.value()));
  RMM_CUDA_TRY(cudaMemcpyAsync(tail.data(), bytes_ptr + bytes - edge, edge, cudaMemcpyDefault, stream.value()));
  stream.synchronize();
  auto const is_tag = [tag](std::uint8_t b) { return b == tag; };
  return std::all_of(head.begin(), head.end(), is_tag) && std::all_of(tail.begin(), tail.end(), is_tag);
}

/// Copies `count` bytes of device (or any CUDA-visible) memory to the host, synchronously.
[[nodiscard]] inline std::vector<std::uint8_t> to_host(void const* ptr, std::size_t count)
{
  std::vector<std::uint8_t> host(count);
  if (count > 0) { RMM_CUDA_TRY(cudaMemcpy(host.data(), ptr, count, cudaMemcpyDefault)); }
  return host;
}

}  // namespace rmm::test
