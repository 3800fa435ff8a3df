// SPDX-License-Identifier: Apache-2.0
#pragma once

// Thrust execution policies whose temporary storage comes from an rmm resource. Include from CUDA
// sources (nvcc) to run algorithms; the policies themselves are plain host objects.

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <thrust/system/cuda/execution_policy.h>

#include <utility>

namespace rmm {

/// The Thrust policy type exec_policy is: CUDA backend, on a stream, temporaries from a
/// thrust_allocator.
using thrust_exec_policy_t =
  thrust::detail::execute_with_allocator<mr::thrust_allocator<char>, thrust::cuda_cub::execute_on_stream_base>;

/// As thrust_exec_policy_t, without the stream synchronization Thrust may do after an algorithm.
using thrust_exec_policy_nosync_t =
  thrust::detail::execute_with_allocator<mr::thrust_allocator<char>, thrust::cuda_cub::execute_on_stream_nosync_base>;

/**
 * Runs a Thrust algorithm on `stream` with its temporary storage (sort buffers, reduction
 * scratch) allocated on `stream` from `mr` (default: the current device's resource), through a
 * thrust_allocator, so the device rules of thrust_allocator apply:
 *
 *   thrust::sort(rmm::exec_policy(stream), v.begin(), v.end());
 *
 * Thrust waits for the stream after algorithms that return a value to the host; use
 * exec_policy_nosync to let it skip the waits it may skip.
 */
class exec_policy : public thrust_exec_policy_t {
 public:
  /**
   * @brief A policy running on `execution_stream`, with temporaries from `mr`.
   *
   * (The parameter is not called `stream`: that would shadow Thrust's member of that name.)
   *
   * @param execution_stream the stream algorithms and their temporary allocations are ordered on
   * @param mr the resource temporaries come from (default: the current device's)
   * @throws rmm::cuda_error when there is no usable device
   */
  explicit exec_policy(cuda_stream_view execution_stream = cuda_stream_default,
                       mr::any_device_resource mr        = mr::get_current_device_resource())
    : thrust_exec_policy_t{
        thrust::cuda::par(mr::thrust_allocator<char>{execution_stream, std::move(mr)}).on(execution_stream.value())}
  {
  }
};

/// exec_policy on thrust::cuda::par_nosync: Thrust skips optional stream synchronizations.
class exec_policy_nosync : public thrust_exec_policy_nosync_t {
 public:
  /**
   * @brief A policy running on `execution_stream`, with temporaries from `mr`, that lets Thrust
   * skip optional stream synchronizations.
   *
   * @param execution_stream the stream algorithms and their temporary allocations are ordered on
   * @param mr the resource temporaries come from (default: the current device's)
   * @throws rmm::cuda_error when there is no usable device
   */
  explicit exec_policy_nosync(cuda_stream_view execution_stream = cuda_stream_default,
                              mr::any_device_resource mr        = mr::get_current_device_resource())
    : thrust_exec_policy_nosync_t{thrust::cuda::par_nosync(mr::thrust_allocator<char>{execution_stream, std::move(mr)})
                                    .on(execution_stream.value())}
  {
  }
};

}  // namespace rmm
