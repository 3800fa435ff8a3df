// SPDX-License-Identifier: Apache-2.0
#include "ipc/ipc_server.hpp"

#include "channel/process_state.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5; older kernels refuse it and pidfd_open serves
#endif

namespace rmm::shim {

namespace {

using clock = std::chrono::steady_clock;

/// A process that holds exports open, watched until it exits.
struct watched_process {
  pid_t pid{0};
  int pidfd{-1};                ///< readable once the process has exited; -1 where there is none
  unsigned long long start{0};  ///< its start, where there is no pidfd
};

/// A watch of the peer of `connection`, process `pid`; nothing when it has exited already.
std::optional<watched_process> watch_peer(int connection, pid_t pid)
{
  int pidfd        = -1;
  socklen_t length = sizeof pidfd;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) == 0 && pidfd >= 0) {
    (void)::fcntl(pidfd, F_SETFD, FD_CLOEXEC);
    return watched_process{pid, pidfd, 0};
  }
#ifdef SYS_pidfd_open
  pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    (void)::fcntl(pidfd, F_SETFD, FD_CLOEXEC);
    return watched_process{pid, pidfd, 0};
  }
  if (errno == ESRCH) { return std::nullopt; }
#endif
  auto const state = state_of_process(pid);
  if (!state.running) { return std::nullopt; }
  return watched_process{pid, -1, state.start_ticks};
}

/// Whether a process watched without a pidfd has exited.
bool exited_without_pidfd(watched_process const& w)
{
  auto const now = state_of_process(w.pid);
  return !now.running || (w.start != 0 && now.start_ticks != w.start);
}

/// A connection whose request has not all come yet.
struct waiting_request {
  int fd;
  pid_t pid;
  clock::time_point deadline;
  ipc::request request{};
  std::size_t have{0};
};

/// Another user: told so and closed. What it sent is read first, so that it finds the answer
/// rather than a reset connection.
void refuse_other_user(int connection) noexcept
{
  char discard[256];
  while (::recv(connection, discard, sizeof discard, MSG_DONTWAIT) > 0) {}
  ipc::reply reply{};
  std::memcpy(reply.magic, ipc::reply_magic, sizeof reply.magic);
  reply.status = CUDA_ERROR_NOT_PERMITTED;
  (void)::send(connection, &reply, sizeof reply, MSG_DONTWAIT | MSG_NOSIGNAL);
  (void)::shutdown(connection, SHUT_WR);
  ::close(connection);
}

class serving_loop {
 public:
  serving_loop(int listener, ipc_server::handler& exports) noexcept : listener_{listener}, exports_{exports} {}

  [[noreturn]] void run() noexcept
  {
    (void)::pthread_setname_np(::pthread_self(), "rmm-ipc");
    std::vector<pollfd> polled;
    for (;;) {
      try {
        polled.clear();
        auto const now       = clock::now();
        bool const accepting = now >= accept_again_;
        polled.push_back({accepting ? listener_ : -1, POLLIN, 0});
        for (auto const& w : waiting_) { polled.push_back({w.fd, POLLIN, 0}); }
        for (auto const& p : watched_) { polled.push_back({p.pidfd, POLLIN, 0}); }
        (void)::poll(polled.data(), polled.size(), timeout_ms(now));
        look_after_importers(polled);
        read_requests(polled);
        if (accepting && (polled[0].revents & POLLIN) != 0) { accept_all(); }
      } catch (...) {  // no memory for a list: the next round may fare better
        std::this_thread::sleep_for(std::chrono::milliseconds{100});
      }
    }
  }

 private:
  /// How long poll may wait: until the next deadline, the end of a pause in accepting, or the next
  /// look at processes watched without a pidfd.
  int timeout_ms(clock::time_point now) const
  {
    auto until = now + std::chrono::seconds{ipc_server::request_seconds};
    for (auto const& w : waiting_) { until = std::min(until, w.deadline); }
    if (now < accept_again_) { until = std::min(until, accept_again_); }
    if (std::any_of(watched_.begin(), watched_.end(), [](auto const& p) { return p.pidfd < 0; })) {
      until = std::min(until, now + std::chrono::seconds{1});
    }
    auto const ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
    return static_cast<int>(std::clamp<long long>(ms + 1, 0, 60'000));
  }

  void look_after_importers(std::vector<pollfd> const& polled)
  {
    auto const first = 1 + waiting_.size();
    std::vector<pid_t> gone;
    for (std::size_t i = 0; i < watched_.size(); ++i) {
      auto const& p = watched_[i];
      if (p.pidfd >= 0 ? polled[first + i].revents != 0 : exited_without_pidfd(p)) { gone.push_back(p.pid); }
    }
    for (auto const pid : gone) {
      exports_.importer_exited(pid);
      forget_watch(pid);
    }
  }

  void read_requests(std::vector<pollfd> const& polled)
  {
    auto const now = clock::now();
    std::vector<waiting_request> complete;
    std::size_t index = 1;
    std::erase_if(waiting_, [&](waiting_request& w) {
      auto const events = polled[index++].revents;
      if (events != 0) {
        // No descriptor a request carries is installed: recv asks for no control data.
        auto const n =
          ::recv(w.fd, reinterpret_cast<char*>(&w.request) + w.have, sizeof w.request - w.have, MSG_DONTWAIT);
        if (n > 0) { w.have += static_cast<std::size_t>(n); }
        if (w.have == sizeof w.request) {
          complete.push_back(w);
          return true;
        }
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          ::close(w.fd);
          return true;
        }
      }
      if (now >= w.deadline) {
        ::close(w.fd);  // too slow: the others do not wait for it
        return true;
      }
      return false;
    });
    for (auto const& w : complete) { answer(w); }
  }

  void accept_all()
  {
    for (int accepted = 0; accepted < 64; ++accepted) {
      int const connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (connection < 0) {
        if (errno == EINTR || errno == ECONNABORTED) { continue; }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          // Out of descriptors or kernel memory: the connection waits in the backlog meanwhile.
          accept_again_ = clock::now() + std::chrono::milliseconds{100};
        }
        return;
      }
      pid_t pid = 0;
      if (!ipc::peer_allowed(connection, pid)) {
        refuse_other_user(connection);
        continue;
      }
      if (waiting_.size() >= static_cast<std::size_t>(ipc_server::max_waiting)) {
        ::close(waiting_.front().fd);  // the oldest has had the longest to speak
        waiting_.erase(waiting_.begin());
      }
      waiting_.push_back({connection, pid, clock::now() + std::chrono::seconds{ipc_server::request_seconds}});
    }
  }

  void answer(waiting_request const& w)
  {
    auto const flags = ::fcntl(w.fd, F_GETFL);
    if (flags >= 0) { (void)::fcntl(w.fd, F_SETFL, flags & ~O_NONBLOCK); }
    timeval const limit{ipc_server::request_seconds, 0};
    (void)::setsockopt(w.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    auto const known = std::any_of(watched_.begin(), watched_.end(), [&](auto const& p) { return p.pid == w.pid; });
    // Watched before the answer: the importer may exit as soon as it has it.
    auto watch       = known ? std::nullopt : watch_peer(w.fd, w.pid);
    bool const holds = exports_.answer(w.fd, w.request, w.pid);
    ::close(w.fd);
    if (!holds || known) {
      if (watch && watch->pidfd >= 0) { ::close(watch->pidfd); }
      return;
    }
    if (!watch) {
      exports_.importer_exited(w.pid);  // gone already
      return;
    }
    watched_.push_back(*watch);
  }

  void forget_watch(pid_t pid)
  {
    std::erase_if(watched_, [pid](watched_process const& p) {
      if (p.pid != pid) { return false; }
      if (p.pidfd >= 0) { ::close(p.pidfd); }
      return true;
    });
  }

  int listener_;
  ipc_server::handler& exports_;
  std::vector<waiting_request> waiting_;
  std::vector<watched_process> watched_;
  clock::time_point accept_again_{};
};

}  // namespace

bool ipc_server::start(int listener, handler& exports) noexcept
{
  try {
    std::thread{[listener, &exports] { serving_loop{listener, exports}.run(); }}.detach();
    return true;
  } catch (...) {
    errno = EAGAIN;
    return false;
  }
}

}  // namespace rmm::shim
