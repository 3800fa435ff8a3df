// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

struct CUctx_st;  // CUcontext, from cuda.h

namespace rmm {

/// Strong type for a CUDA device ordinal.
class cuda_device_id {
 public:
  using value_type = int;  ///< the type of a CUDA device ordinal

  constexpr cuda_device_id() noexcept = default;
  /**
   * @brief Wraps a device ordinal.
   *
   * @param id the ordinal, as CUDA numbers devices (0 for the first visible device)
   */
  constexpr explicit cuda_device_id(value_type id) noexcept : id_{id} {}

  /**
   * @brief The wrapped ordinal.
   *
   * @return the device ordinal
   */
  [[nodiscard]] constexpr value_type value() const noexcept { return id_; }

  /// @brief Default equality: the ordinals are equal
  friend constexpr bool operator==(cuda_device_id, cuda_device_id) noexcept = default;
  /// @brief Default three-way comparison: orders by ordinal
  friend constexpr auto operator<=>(cuda_device_id, cuda_device_id) noexcept = default;

 private:
  value_type id_{0};
};

/**
 * @brief The calling thread's current device.
 *
 * When no context is current, device 0's primary context is made current first, as the CUDA
 * runtime does.
 *
 * @return the current device
 * @throws rmm::cuda_error when there is no usable device
 */
[[nodiscard]] cuda_device_id get_current_cuda_device();

/**
 * @brief Number of visible CUDA devices.
 *
 * @return the number of devices; 0 when there are none
 * @throws rmm::cuda_error when the driver cannot be used (for example, no driver installed)
 */
[[nodiscard]] int get_num_cuda_devices();

/**
 * @brief Free and total memory of the current device.
 *
 * @return {free, total} bytes
 * @throws rmm::cuda_error when the query fails
 */
[[nodiscard]] std::pair<std::size_t, std::size_t> available_device_memory();

/**
 * @brief A share of the current device's free memory, for sizing pools and arenas.
 *
 * @param percent the share, from 0 to 100
 * @return `percent` of the free bytes, rounded down to a multiple of 256
 * @throws rmm::logic_error when `percent` is outside [0, 100]
 * @throws rmm::cuda_error when the memory query fails
 */
[[nodiscard]] std::size_t percent_of_free_device_memory(int percent);

/// Makes `device` current for the scope (its primary context), restoring the previous context, or
/// none, on exit. Cheap when the device is already current.
struct cuda_set_device_raii {
  /**
   * @brief Makes `device`'s primary context current unless `device` is current already.
   *
   * @param device the device to make current
   * @throws rmm::cuda_error when the current context cannot be read or the device's cannot be set
   */
  explicit cuda_set_device_raii(cuda_device_id device);
  /// @brief Restores the context that was current at construction, if it was changed.
  ~cuda_set_device_raii() noexcept;
  cuda_set_device_raii(cuda_set_device_raii const&)            = delete;
  cuda_set_device_raii& operator=(cuda_set_device_raii const&) = delete;

 private:
  CUctx_st* previous_{};
  bool needs_reset_{false};
};

}  // namespace rmm
