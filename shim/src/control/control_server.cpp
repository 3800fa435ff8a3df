// SPDX-License-Identifier: Apache-2.0
#include "control/control_server.hpp"

#include "channel/control_channel.hpp"
#include "pause/pause_control.hpp"
#include "report/report.hpp"
#include "settings.hpp"
#include "state.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string_view>
#include <thread>
#include <vector>

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

/// A connection whose request has not all come yet.
struct waiting_connection {
  int fd;
  bool refused;  ///< another user's: told so once its request is in, or its time is up
  std::chrono::steady_clock::time_point deadline;
  std::string line{};
};

constexpr std::size_t max_waiting         = 32;  // of this user's; the oldest gives way
constexpr std::size_t max_refused_waiting = 8;   // of other users'
constexpr auto refused_wait               = std::chrono::seconds{1};
constexpr std::size_t max_discarded_bytes = std::size_t{64} << 10;
constexpr auto discard_wait               = std::chrono::milliseconds{200};

/// What the bytes of a request so far make.
enum class request_state { partial, complete, bad };

/// Adds `data` to `line`: a whole request line (its newline taken off), a bad one (the reason in
/// `error`), or not yet either.
request_state take(std::string& line, std::string_view data, std::string& error)
{
  line.append(data);
  if (auto const end = line.find('\n'); end != std::string::npos) {
    if (end + 1 != line.size()) {
      error = "one request per connection";
      return request_state::bad;
    }
    line.pop_back();
    return request_state::complete;
  }
  if (line.size() > rmm::control::max_request_bytes) {
    error = fmt::format("the request is longer than {} bytes", rmm::control::max_request_bytes);
    return request_state::bad;
  }
  return request_state::partial;
}

/// Ends the answer and closes `connection`, having read what the peer sent and was not read (up
/// to a bound): a socket closed with input unread resets the connection, and the peer would find
/// the reset instead of the answer. With `wait`, waits a moment for the peer's end.
void close_gently(int connection, bool wait) noexcept
{
  // The end of the answer for the asker, even where a child forked meanwhile holds a copy.
  (void)::shutdown(connection, SHUT_WR);
  auto const until = std::chrono::steady_clock::now() + discard_wait;
  std::array<char, 4096> discard{};
  for (std::size_t read = 0; read < max_discarded_bytes;) {
    auto const n = ::recv(connection, discard.data(), discard.size(), MSG_DONTWAIT);
    if (n > 0) {
      read += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) || !wait) { break; }
    auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) { break; }
    pollfd ready{connection, POLLIN, 0};
    (void)::poll(&ready, 1, static_cast<int>(left.count()));
  }
  ::close(connection);
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

/// A pause of the process, or of the request's tag.
control_outcome pause(rmm::control::request const& r, pause_contents contents)
{
  return r.tag.empty() ? pause_process(contents) : pause_tag(r.tag, contents);
}

control_outcome respond(rmm::control::request const& r)
{
  auto& s = state();
  switch (r.c) {
    case command::ping: {
      auto const pause = s.pause.status();
      auto const state = pause.paused ? "paused" : pause.closed ? "pausing" : "running";
      return {true, fmt::format("{} {} {}\n", ::getpid(), state, program_name())};
    }
    case command::report:
      return {true,
              render_report(report_format::text, settings().verbose ? report_detail::verbose : report_detail::summary,
                            live_report_sources_of(s))};
    case command::report_json:
      return {true, render_report(report_format::json, report_detail::verbose, live_report_sources_of(s))};
    case command::release: return release_process();
    case command::pause: return pause(r, pause_contents::as_tagged);
    case command::pause_discard: return pause(r, pause_contents::discard);
    case command::pause_keep: return pause(r, pause_contents::keep);
    case command::resume: return r.tag.empty() ? resume_process() : resume_tag(r.tag);
  }
  return {false, "unknown command"};
}

/// The answer to a whole request line of this process's user: `ok` or `error`, then the text.
std::string answer_to(std::string const& line)
{
  try {
    auto const request = rmm::control::parse_request(line);
    if (!request) {
      auto shown = line.substr(0, 64);
      for (auto& ch : shown) {
        if (ch < ' ' || ch > '~') { ch = '?'; }
      }
      return fmt::format("error\nunknown request '{}': ask one of {}\n", shown, rmm::control::request_list());
    }
    if (exiting()) { return "error\nthe process is exiting\n"; }
    auto const outcome = respond(*request);
    auto text          = outcome.message;
    if (!text.empty() && text.back() != '\n') { text += '\n'; }
    return (outcome.ok ? "ok\n" : "error\n") + text;
  } catch (std::exception const& e) {
    return fmt::format("error\n{}\n", e.what());
  }
}

using clock = std::chrono::steady_clock;

void answer_now(waiting_connection const& w, std::string const& text) noexcept
{
  send_all(w.fd, text);
  close_gently(w.fd, false);
}

/// Waits until the listener (when `accepting`) or a waiting connection has something, or the
/// first deadline (a connection's, or the time to accept again) comes; `polled` then holds the
/// listener first and the waiting connections in their order.
void poll_connections(int listener,
                      bool accepting,
                      std::vector<waiting_connection> const& waiting,
                      clock::time_point accept_again,
                      std::vector<pollfd>& polled)
{
  auto const now = clock::now();
  auto until     = now + std::chrono::seconds{rmm::control::request_timeout_seconds};
  polled.clear();
  polled.push_back({accepting ? listener : -1, POLLIN, 0});
  for (auto const& w : waiting) {
    polled.push_back({w.fd, POLLIN, 0});
    until = std::min(until, w.deadline);
  }
  if (!accepting) { until = std::min(until, accept_again); }
  auto const wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
  (void)::poll(polled.data(), polled.size(), static_cast<int>(std::max<long long>(wait, 0)));
}

/// Reads what came on `w` (when `readable`), without blocking: a whole request, a bad or late one
/// (`error` says why), or not yet.
request_state read_request(waiting_connection& w, bool readable, clock::time_point now, std::string& error)
{
  auto state = request_state::partial;
  if (readable) {
    std::array<char, rmm::control::max_request_bytes + 1> chunk{};
    auto const n = ::recv(w.fd, chunk.data(), chunk.size() - std::min(w.line.size(), chunk.size() - 1), MSG_DONTWAIT);
    if (n > 0) {
      state = take(w.line, {chunk.data(), static_cast<std::size_t>(n)}, error);
    } else if (n == 0) {
      state = request_state::bad;
      error = "the request ended before its newline";
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      state = request_state::bad;
      error = fmt::format("no request: {}", std::strerror(errno));
    }
  }
  if (state == request_state::partial && now >= w.deadline) {
    state = request_state::bad;
    error = fmt::format("the request took longer than {} s", rmm::control::request_timeout_seconds);
  }
  return state;
}

/// Accepts the connections waiting on `listener` (up to 64 a round) into `waiting`, the oldest of
/// their kind giving way when there are too many. False when the listener was closed; out of
/// descriptors or kernel memory, accepts again only after `accept_again`.
bool accept_waiting(int listener, std::vector<waiting_connection>& waiting, clock::time_point& accept_again)
{
  for (int accepted = 0; accepted < 64; ++accepted) {
    int const connection = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (connection < 0) {
      if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK) { return false; }
      if (errno == EINTR || errno == ECONNABORTED) { continue; }
      if (errno != EAGAIN && errno != EWOULDBLOCK) { accept_again = clock::now() + std::chrono::milliseconds{100}; }
      return true;
    }
    bool const refused = !same_user(connection);
    auto const kind    = [refused](waiting_connection const& w) { return w.refused == refused; };
    if (static_cast<std::size_t>(std::count_if(waiting.begin(), waiting.end(), kind)) >=
        (refused ? max_refused_waiting : max_waiting)) {
      auto const oldest = std::find_if(waiting.begin(), waiting.end(), kind);
      ::close(oldest->fd);  // the oldest has had the longest to speak
      waiting.erase(oldest);
    }
    auto const deadline = refused ? clock::now() + refused_wait
                                  : clock::now() + std::chrono::seconds{rmm::control::request_timeout_seconds};
    waiting.push_back({connection, refused, deadline});
  }
  return true;
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
      auto const choice = rmm::control::choose_socket_directory();
      if (choice.dir.empty()) { return refuse(choice.error); }
      if (!choice.passed_over.empty()) {
        fmt::print(stderr, "rmm shim: {}; listening for rmm-ctl in {} instead (rmm-ctl looks there too)\n",
                   choice.passed_over, choice.dir);
      }
      path_ = rmm::control::socket_path(choice.dir, ::getpid());
      // Bound under a name rmm-ctl does not list, and renamed once listening: a socket listed is
      // always one that answers, never one rmm-ctl could take for stale and remove.
      auto const starting = fmt::format("{}/.{}.sock.starting", choice.dir, ::getpid());
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      if (starting.size() >= sizeof(address.sun_path)) {
        return refuse("the socket path " + starting + " is too long");
      }
      std::memcpy(address.sun_path, starting.c_str(), starting.size() + 1);
      int const fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) { return refuse(fmt::format("socket: {}", std::strerror(errno))); }
      (void)::unlink(starting.c_str());  // left by an earlier process of this id that did not exit cleanly
      if (::bind(fd, reinterpret_cast<sockaddr const*>(&address), sizeof(address)) != 0 ||
          ::chmod(starting.c_str(), 0600) != 0 || ::listen(fd, 64) != 0 ||
          ::rename(starting.c_str(), path_.c_str()) != 0) {
        auto const why = fmt::format("{}: {}", path_, std::strerror(errno));
        ::close(fd);
        (void)::unlink(starting.c_str());
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
  std::vector<waiting_connection> waiting;
  std::vector<pollfd> polled;
  clock::time_point accept_again{};
  for (;;) {
    int const listener = listening_.load(std::memory_order_acquire);
    if (listener < 0) { return; }
    try {
      bool const accepting = clock::now() >= accept_again;
      poll_connections(listener, accepting, waiting, accept_again, polled);
      auto const now    = clock::now();
      std::size_t index = 1;
      std::erase_if(waiting, [&](waiting_connection& w) {
        std::string error;
        auto const state = read_request(w, polled[index++].revents != 0, now, error);
        if (state == request_state::partial) { return false; }
        if (w.refused) {
          answer_now(w, "error\nrefused: this process answers its own user only\n");
        } else if (state == request_state::bad) {
          answer_now(w, "error\n" + error + "\n");
        } else {
          dispatch(w.fd, std::move(w.line));
        }
        return true;
      });
      if (!accepting || (polled[0].revents & POLLIN) == 0) { continue; }
      if (!accept_waiting(listener, waiting, accept_again)) { return; }  // the socket was closed
    } catch (...) {  // no memory for a list: the next round may fare better
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
    }
  }
}

void control_server::dispatch(int connection, std::string request) noexcept
{
  auto const flags = ::fcntl(connection, F_GETFL);
  if (flags >= 0) { (void)::fcntl(connection, F_SETFL, flags & ~O_NONBLOCK); }
  limit_waits(connection, rmm::control::request_timeout_seconds, rmm::control::reply_timeout_seconds);
  auto const answer_and_close = [connection](std::string const& line) {
    send_all(connection, answer_to(line));
    close_gently(connection, true);
  };
  // Each request on a thread of its own, so that a question (list, report) is answered while a
  // pause copies gigabytes.
  if (answering_.fetch_add(1, std::memory_order_acq_rel) < max_answering) {
    try {
      std::thread{[this, answer_and_close, line = std::move(request)] {
        answer_and_close(line);
        answering_.fetch_sub(1, std::memory_order_acq_rel);
      }}.detach();
      return;
    } catch (...) {  // no thread: refused below
    }
  }
  answering_.fetch_sub(1, std::memory_order_acq_rel);
  send_all(connection, fmt::format("error\nthe process is answering {} requests already: ask again\n", max_answering));
  close_gently(connection, false);
}

void control_server::stop() noexcept
{
  if (owner_ != ::getpid()) { return; }  // a forked child leaves its parent's socket alone
  if (listening_.load(std::memory_order_acquire) >= 0) { (void)::unlink(path_.c_str()); }
}

namespace {
std::atomic<control_server*> current_server{nullptr};  // never deleted: its thread may still answer
std::once_flag first_server;
}  // namespace

control_server& control_server::instance() noexcept
{
  if (auto* server = current_server.load(std::memory_order_acquire); server != nullptr) [[likely]] { return *server; }
  std::call_once(first_server, [] {
    control_server* expected = nullptr;
    current_server.compare_exchange_strong(expected, new control_server);
  });
  return *current_server.load(std::memory_order_acquire);
}

void control_server::renew_after_fork() noexcept
{
  if (auto* parents = current_server.load(std::memory_order_acquire)) { parents->forget_in_child(); }
  current_server.store(new control_server, std::memory_order_release);
}

void control_server::forget_in_child() noexcept
{
  int const fd = listening_.exchange(-1, std::memory_order_acq_rel);
  if (fd >= 0) { ::close(fd); }
}

}  // namespace rmm::shim
