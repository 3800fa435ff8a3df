#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

struct CUctx_st;  // CUcontext, from cuda.h

namespace rmm {

/// Strong type for a CUDA device ordinal.
class cuda_device_id {
 public:
  using value_type = int;

  constexpr cuda_device_id() noexcept = default;
  constexpr explicit cuda_device_id(value_type id) noexcept : id_{id} {}

  [[nodiscard]] constexpr value_type value() const noexcept { return id_; }

  friend constexpr bool operator==(cuda_device_id, cuda_device_id) noexcept  = default;
  friend constexpr auto operator<=>(cuda_device_id, cuda_device_id) noexcept = default;

 private:
  value_type id_{0};
};

/// The calling thread's current device. Throws rmm::cuda_error when there is no usable device.
[[nodiscard]] cuda_device_id get_current_cuda_device();

/// Number of visible CUDA devices; 0 when there are none. Throws rmm::cuda_error when the driver
/// cannot be used (for example, no driver installed).
[[nodiscard]] int get_num_cuda_devices();

/// {free, total} bytes of the current device.
[[nodiscard]] std::pair<std::size_t, std::size_t> available_device_memory();

/// `percent` (0 to 100) of the current device's free memory, rounded down to a multiple of 256.
[[nodiscard]] std::size_t percent_of_free_device_memory(int percent);

/// Makes `device` current for the scope (its primary context), restoring the previous context, or
/// none, on exit. Cheap when the device is already current.
struct cuda_set_device_raii {
  explicit cuda_set_device_raii(cuda_device_id device);
  ~cuda_set_device_raii() noexcept;
  cuda_set_device_raii(cuda_set_device_raii const&)            = delete;
  cuda_set_device_raii& operator=(cuda_set_device_raii const&) = delete;

 private:
  CUctx_st* previous_{};
  bool needs_reset_{false};
};

}  // namespace rmm
