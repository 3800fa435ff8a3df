// SPDX-License-Identifier: Apache-2.0
#pragma once

// The shim's end of the control channel (control_channel.hpp): a thread that answers rmm-ctl on
// this process's socket, each request on a thread of its own (a pause and a resume take turns; a
// question or a release is answered meanwhile). It starts when the process builds its first stack (a
// process that never allocates device memory, a shell around the program, gets no socket) and the
// socket goes at exit.

#include <atomic>
#include <mutex>
#include <string>

#include <sys/types.h>

namespace rmm::shim {

class control_server {
 public:
  /// Starts listening, once per process, when the `control` setting is on; says on stderr why not
  /// when it cannot.
  void start() noexcept;
  /// At exit: removes the socket, if this process made it.
  void stop() noexcept;
  /// In a forked child: the parent's socket is not the child's; closes it and leaves the file.
  void forget_in_child() noexcept;

 private:
  void serve() noexcept;
  void answer_and_close(int connection) noexcept;
  void answer(int connection) noexcept;

  static constexpr int max_answering = 4;  // requests answered at once, each on a thread

  std::once_flag started_;
  std::atomic<int> listening_{-1};
  std::atomic<int> answering_{0};
  pid_t owner_{0};
  std::string path_;
};

}  // namespace rmm::shim
