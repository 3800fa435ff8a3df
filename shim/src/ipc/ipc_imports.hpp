// SPDX-License-Identifier: Apache-2.0
#pragma once

// The shim handles (ipc_channel.hpp) this process opened: the exporter's memory under the block,
// mapped here at addresses of this process's own, and how to undo that at cuIpcCloseMemHandle.
// What the exporter answers is checked before anything is mapped or allocated for it: its
// credentials first, then every count, offset and size.

#include "ipc/ipc_channel.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rmm::shim {

namespace detail {
class imported_handles;
}

class ipc_imports {
 public:
  ipc_imports()                              = default;
  ipc_imports(ipc_imports const&)            = delete;
  ipc_imports& operator=(ipc_imports const&) = delete;

  /// cuIpcOpenMemHandle of a shim handle: the exporter's block, mapped for the current device;
  /// nothing for any other handle (the driver's own, passed through). The same handle opened again
  /// gives the same address. Opening a handle in the process that exported it is
  /// CUDA_ERROR_INVALID_CONTEXT, as natively; CUDA_ERROR_NOT_SUPPORTED where the driver lacks
  /// what mapping another process's memory takes.
  [[nodiscard]] std::optional<CUresult> open(CUdeviceptr* out, CUipcMemHandle const& handle, unsigned int flags);

  /// cuIpcCloseMemHandle of an address open() gave; nothing for any other (passed through). The
  /// last close waits for the device's work, unmaps, and tells the exporter.
  [[nodiscard]] std::optional<CUresult> close(CUdeviceptr ptr);

 private:
  struct opened {
    ipc::handle_fields exporter;
    CUdeviceptr ptr;     // what the program was given
    CUdeviceptr mapped;  // the reservation mapped here (0 for a legacy handle)
    std::size_t span;    // its size
    CUdeviceptr legacy;  // what the driver's open of a legacy handle gave (0: none)
    int references;
  };
  /// The memory the exporter's answer describes, mapped here: `record` completed, or why not.
  struct mapping_failure {
    CUresult result;
    std::string why;
    bool answer_broken{false};  ///< the answer broke the protocol: its sender is told nothing more
  };
  [[nodiscard]] std::optional<mapping_failure> map_answer(int connection,
                                                          ipc::reply const& reply,
                                                          CUdevice device,
                                                          unsigned int flags,
                                                          opened& record);
  /// A block of a cudaMalloc allocation: the driver's handle of it opened here.
  [[nodiscard]] static std::optional<mapping_failure> open_legacy(ipc::piece const& piece,
                                                                  unsigned int flags,
                                                                  opened& record);
  /// The allocations imported from the exporter, mapped side by side as they are there, readable
  /// and writable by `device`; the block starts `-first_offset` bytes into them.
  [[nodiscard]] static std::optional<mapping_failure> map_imported(detail::imported_handles const& handles,
                                                                   std::uint64_t span,
                                                                   std::int64_t first_offset,
                                                                   CUdevice device,
                                                                   opened& record);

  std::mutex mutex_;
  std::vector<opened> opened_;
};

}  // namespace rmm::shim
