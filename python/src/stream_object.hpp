// SPDX-License-Identifier: Apache-2.0
#pragma once
// The C++ side of rmm.pylibrmm.stream.Stream: a stream handle, owned (a stream rmm created) or
// borrowed from another library's stream object, which it then keeps alive.

#include "bindings.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>

#include <optional>

namespace rmm::python {

struct stream_object {
  [[nodiscard]] rmm::cuda_stream_view view() const noexcept { return handle; }

  cudaStream_t handle{};
  std::optional<rmm::cuda_stream> owned;  ///< set when rmm created the stream
  nb::object source;                      ///< the borrowed-from object, kept alive
};

/// A stream handle from a Python int (0, 1 and 2 are CUDA's default stream values).
[[nodiscard]] cudaStream_t handle_from_int(nb::handle value, char const* what);

/// The handle an object reports through `__cuda_stream__()`: a (version, handle) pair.
[[nodiscard]] cudaStream_t handle_from_protocol(nb::handle value);

}  // namespace rmm::python
