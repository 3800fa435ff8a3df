// SPDX-License-Identifier: Apache-2.0
#pragma once

// The thread that serves this process's CUDA IPC exports (ipc_exports.hpp) on its socket
// (ipc_channel.hpp). Written for a machine shared with people who do not wish it well:
// - each peer's credentials are checked when its connection is accepted, before a byte of it is
//   read: another user's connection is answered "not permitted" and closed;
// - requests are read without blocking, from every connection at once: one that does not complete
//   its request within request_seconds is dropped, and at most max_waiting wait at once (the
//   oldest gives way), so that idle connections delay nobody;
// - descriptors a request carries are never installed here;
// - a failed accept (out of descriptors, say) is retried after a pause, never the end of serving;
// - each process holding an export open is watched (a pidfd), and its opens are dropped when it
//   dies, since the driver releases a dead process's mappings.

#include "ipc/ipc_channel.hpp"

#include <sys/types.h>

namespace rmm::shim {

class ipc_server {
 public:
  /// What the serving thread asks of the exports.
  class handler {
   public:
    /// Answers `request` of process `importer` on `connection` (blocking, each call bounded).
    /// True when `importer` holds an export open now: it is watched from then on.
    virtual bool answer(int connection, ipc::request const& request, pid_t importer) noexcept = 0;
    /// `importer`, which held exports open, has exited.
    virtual void importer_exited(pid_t importer) noexcept = 0;

   protected:
    ~handler() = default;
  };

  /// Serves `listener` (a listening socket, non-blocking) on a thread of its own, for the life of
  /// the process. False (errno set) when the thread cannot start; the caller keeps the socket.
  [[nodiscard]] static bool start(int listener, handler& exports) noexcept;

  static constexpr int request_seconds = 5;
  static constexpr int max_waiting     = 32;
};

}  // namespace rmm::shim
