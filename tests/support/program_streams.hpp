// SPDX-License-Identifier: Apache-2.0
#pragma once

// Streams a test creates as a program would (cudaStreamCreateWithFlags, non-blocking), destroyed
// with the object: for the cases where the driver hands a destroyed stream's handle out again.

#include <rmm/error.hpp>

#include <cuda_runtime_api.h>

#include <vector>

namespace rmm::test {

class program_streams {
 public:
  program_streams()                                  = default;
  program_streams(program_streams const&)            = delete;
  program_streams& operator=(program_streams const&) = delete;
  ~program_streams()
  {
    for (auto s : streams_) { RMM_ASSERT_CUDA_SUCCESS(cudaStreamDestroy(s)); }
  }

  cudaStream_t create()
  {
    cudaStream_t s{};
    RMM_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    streams_.push_back(s);
    return s;
  }

  /// Creates streams until one gets `handle`, at most 64 (a driver that reuses handles does so
  /// within a few): that one, or the last one created.
  cudaStream_t create_until(cudaStream_t handle)
  {
    cudaStream_t s{};
    for (int i = 0; i < 64 && s != handle; ++i) { s = create(); }
    return s;
  }

 private:
  std::vector<cudaStream_t> streams_;
};

}  // namespace rmm::test
