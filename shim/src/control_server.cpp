// SPDX-License-Identifier: Apache-2.0
#include "control_server.hpp"

#include "control_channel.hpp"
#include "pause_control.hpp"
#include "report.hpp"
#include "settings.hpp"
#include "state.hpp"

#include <fmt/format.h>

#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <thread>

namespace rmm::shim {

namespace {

using rmm::control::command;

/// Bounds how long a connection waits for its peer in each direction.
void limit_waits(int connection, int receive_seconds, int send_seconds) noexcept
{
  timeval receive{receive_seconds, 0};
  timeval send{send_seconds, 0};
  (void)::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &receive, sizeof(receive));
  (void)::setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &send, sizeof(send));
}

/// Whether the peer runs as this process's user. The socket's mode already keeps others out; this
/// holds even where the file's permissions were loosened.
bool same_user(int connection) noexcept
{
  ucred peer{};
  socklen_t size = sizeof(peer);
  return ::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 && peer.uid == ::geteuid();
}

/// The request line, or nothing (the reason in `error`) when it is too long, broken or late. The
/// whole request must come within the request timeout, however it is split.
std::optional<std::string> read_request(int connection, std::string& error)
{
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds{rmm::control::request_timeout_seconds};
  std::string line;
  std::array<char, rmm::control::max_request_bytes + 1> chunk{};
  while (line.size() <= rmm::control::max_request_bytes) {
    if (std::chrono::steady_clock::now() >= deadline) {
      error = fmt::format("the request took longer than {} s", rmm::control::request_timeout_seconds);
      return std::nullopt;
    }
    auto const n = ::recv(connection, chunk.data(), chunk.size() - line.size(), 0);
    if (n < 0 && errno == EINTR) { continue; }
    if (n <= 0) {
      error = n == 0 ? "the request ended before its newline" : fmt::format("no request: {}", std::strerror(errno));
      return std::nullopt;
    }
    line.append(chunk.data(), static_cast<std::size_t>(n));
    if (auto const end = line.find('\n'); end != std::string::npos) {
      if (end + 1 != line.size()) {
        error = "one request per connection";
        return std::nullopt;
      }
      line.pop_back();
      return line;
    }
  }
  error = fmt::format("the request is longer than {} bytes", rmm::control::max_request_bytes);
  return std::nullopt;
}

void send_all(int connection, std::string const& text) noexcept
{
  std::size_t sent = 0;
  while (sent < text.size()) {
    auto const n = ::send(connection, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) { continue; }
    if (n <= 0) { return; }  // the asker went away: nothing to tell
    sent += static_cast<std::size_t>(n);
  }
}

std::string program_name()
{
  std::ifstream comm{"/proc/self/comm"};
  std::string name;
  std::getline(comm, name);
  return name.empty() ? "?" : name;
}

control_outcome respond(command c)
{
  auto& s = state();
  switch (c) {
    case command::ping: {
      auto const pause = s.pause.status();
      auto const state = pause.paused ? "paused" : pause.closed ? "pausing" : "running";
      return {true, fmt::format("{} {} {}\n", ::getpid(), state, program_name())};
    }
    case command::report:
      return {true,
              render_report(report_format::text, settings().verbose ? report_detail::verbose : report_detail::summary,
                            report_sources_of(s))};
    case command::report_json:
      return {true, render_report(report_format::json, report_detail::verbose, report_sources_of(s))};
    case command::release: return release_process();
    case command::pause: return pause_process(pause_contents::keep);
    case command::pause_discard: return pause_process(pause_contents::discard);
    case command::resume: return resume_process();
  }
  return {false, "unknown command"};
}

}  // namespace

void control_server::start() noexcept
{
  if (!settings().control) { return; }
  std::call_once(started_, [this] {
    auto const refuse = [](std::string const& why) {
      fmt::print(stderr, "rmm shim: not listening for rmm-ctl: {} (RMM_SHIM_CONTROL=false turns the socket off)\n",
                 why);
    };
    try {
      auto const dir = rmm::control::socket_directory();
      if (auto const why = rmm::control::prepare_socket_directory(dir); !why.empty()) { return refuse(why); }
      path_ = rmm::control::socket_path(dir, ::getpid());
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      if (path_.size() >= sizeof(address.sun_path)) { return refuse("the socket path " + path_ + " is too long"); }
      std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
      int const fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) { return refuse(fmt::format("socket: {}", std::strerror(errno))); }
      (void)::unlink(path_.c_str());  // left by an earlier process of this id that did not exit cleanly
      if (::bind(fd, reinterpret_cast<sockaddr const*>(&address), sizeof(address)) != 0 ||
          ::chmod(path_.c_str(), 0600) != 0 || ::listen(fd, 8) != 0) {
        auto const why = fmt::format("{}: {}", path_, std::strerror(errno));
        ::close(fd);
        (void)::unlink(path_.c_str());
        return refuse(why);
      }
      owner_ = ::getpid();
      listening_.store(fd, std::memory_order_release);
      std::thread{[this] { serve(); }}.detach();
    } catch (std::exception const& e) {
      refuse(e.what());
    }
  });
}

void control_server::serve() noexcept
{
  (void)::pthread_setname_np(::pthread_self(), "rmm-ctl");
  for (;;) {
    int const fd = listening_.load(std::memory_order_acquire);
    if (fd < 0) { return; }
    int const connection = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) {
      if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK) { return; }  // the socket was closed
      // Out of descriptors or kernel memory, or the asker gave up: the next one may fare better.
      if (errno != EINTR && errno != ECONNABORTED) { std::this_thread::sleep_for(std::chrono::milliseconds{100}); }
      continue;
    }
    // Each request on a thread of its own, so that a question (list, report) is answered while a
    // pause copies gigabytes; past a few at once, here, which makes the next askers wait.
    if (answering_.fetch_add(1, std::memory_order_acq_rel) < max_answering) {
      try {
        std::thread{[this, connection] {
          answer_and_close(connection);
          answering_.fetch_sub(1, std::memory_order_acq_rel);
        }}.detach();
        continue;
      } catch (...) {  // no thread: answered here
      }
    }
    answer_and_close(connection);
    answering_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void control_server::answer_and_close(int connection) noexcept
{
  answer(connection);
  // The end of the answer for the asker, even where a child forked meanwhile holds a copy.
  (void)::shutdown(connection, SHUT_RDWR);
  ::close(connection);
}

void control_server::answer(int connection) noexcept
{
  try {
    limit_waits(connection, rmm::control::request_timeout_seconds, rmm::control::reply_timeout_seconds);
    if (!same_user(connection)) {
      send_all(connection, "error\nrefused: this process answers its own user only\n");
      return;
    }
    std::string error;
    auto const line = read_request(connection, error);
    if (!line) {
      send_all(connection, "error\n" + error + "\n");
      return;
    }
    auto const c = rmm::control::parse_request(*line);
    if (!c) {
      auto shown = line->substr(0, 64);
      for (auto& ch : shown) {
        if (ch < ' ' || ch > '~') { ch = '?'; }
      }
      send_all(connection,
               fmt::format("error\nunknown request '{}': ask one of {}\n", shown, rmm::control::request_list()));
      return;
    }
    if (exiting()) {
      send_all(connection, "error\nthe process is exiting\n");
      return;
    }
    auto const outcome = respond(*c);
    auto text          = outcome.message;
    if (!text.empty() && text.back() != '\n') { text += '\n'; }
    send_all(connection, (outcome.ok ? "ok\n" : "error\n") + text);
  } catch (std::exception const& e) {
    send_all(connection, fmt::format("error\n{}\n", e.what()));
  }
}

void control_server::stop() noexcept
{
  if (owner_ != ::getpid()) { return; }  // a forked child leaves its parent's socket alone
  if (listening_.load(std::memory_order_acquire) >= 0) { (void)::unlink(path_.c_str()); }
}

void control_server::forget_in_child() noexcept
{
  int const fd = listening_.exchange(-1, std::memory_order_acq_rel);
  if (fd >= 0) { ::close(fd); }
}

}  // namespace rmm::shim
