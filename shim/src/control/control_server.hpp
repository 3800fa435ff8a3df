// SPDX-License-Identifier: Apache-2.0
#pragma once

// The shim's end of the control channel (control_channel.hpp): a thread that answers rmm-ctl on
// this process's socket. It reads the requests of every connection at once without blocking (a
// request must be whole within request_timeout_seconds of the connection, however it is split; at
// most max_waiting wait at once, the oldest giving way), so that slow or idle clients delay
// nobody, and answers each complete one on a thread of its own (a pause and a resume take turns; a
// question or a release is answered meanwhile). Another user's connection is refused with a
// message. Every connection is closed with what the peer sent read, so that it finds the answer,
// not a reset. It starts when the process builds its first stack (a process that never allocates
// device memory, a shell around the program, gets no socket) and the socket goes at exit.

#include <atomic>
#include <mutex>
#include <string>

#include <sys/types.h>

namespace rmm::shim {

class control_server {
 public:
  /// The process's server (a forked child gets its own: renew_after_fork).
  [[nodiscard]] static control_server& instance() noexcept;
  /// In a forked child: the parent's socket is closed and left alone, and the child gets a server
  /// of its own, which starts when it first builds a stack.
  static void renew_after_fork() noexcept;

  /// Starts listening, once per process, when the `control` setting is on; says on stderr why not
  /// when it cannot.
  void start() noexcept;
  /// At exit: removes the socket, if this process made it.
  void stop() noexcept;

 private:
  /// In a forked child: the parent's socket is not the child's; closes it and leaves the file.
  void forget_in_child() noexcept;
  void serve() noexcept;
  /// Answers a complete request on a thread of its own, or at once when too many are answered.
  void dispatch(int connection, std::string request) noexcept;

  static constexpr int max_answering = 16;  // requests answered at once, each on a thread

  std::once_flag started_;
  std::atomic<int> listening_{-1};
  std::atomic<int> answering_{0};
  pid_t owner_{0};
  std::string path_;
};

}  // namespace rmm::shim
