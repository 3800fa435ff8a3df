// SPDX-License-Identifier: Apache-2.0
#include "control_channel.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rmm::control {

namespace {

struct known_request {
  command c;
  std::string_view line;
};
constexpr std::array<known_request, 7> requests{{{command::ping, "ping"},
                                                 {command::report, "report"},
                                                 {command::report_json, "report json"},
                                                 {command::release, "release"},
                                                 {command::pause, "pause"},
                                                 {command::pause_discard, "pause discard"},
                                                 {command::resume, "resume"}}};

/// A socket address for `path`; false when the path does not fit.
bool address_of(std::string const& path, sockaddr_un& address) noexcept
{
  address            = {};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) { return false; }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return true;
}

}  // namespace

std::string_view request_of(command c) noexcept
{
  for (auto const& r : requests) {
    if (r.c == c) { return r.line; }
  }
  return {};
}

std::optional<command> parse_request(std::string_view line) noexcept
{
  for (auto const& r : requests) {
    if (r.line == line) { return r.c; }
  }
  return std::nullopt;
}

std::string_view request_list() noexcept { return "report, report json, release, pause, pause discard, resume"; }

std::string socket_directory()
{
  // XDG_RUNTIME_DIR is this user's by definition where it is set (systemd makes it 0700); /tmp is
  // everyone's, so the directory there carries the user id and is checked before use.
  if (char const* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && runtime[0] == '/') {
    struct stat info {};
    if (::stat(runtime, &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == ::geteuid()) {
      return std::string{runtime} + "/rmm";
    }
  }
  return fmt::format("/tmp/rmm-{}", ::geteuid());
}

std::string prepare_socket_directory(std::string const& dir)
{
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fmt::format("cannot make the control directory {}: {}", dir, std::strerror(errno));
  }
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) {
    return fmt::format("cannot read the control directory {}: {}", dir, std::strerror(errno));
  }
  if (!S_ISDIR(info.st_mode)) { return fmt::format("the control directory {} is not a directory (a link?)", dir); }
  if (info.st_uid != ::geteuid()) {
    return fmt::format("the control directory {} belongs to user {}, not to this user ({})", dir, info.st_uid,
                       ::geteuid());
  }
  if ((info.st_mode & 077) != 0) {
    return fmt::format("the control directory {} is open to other users (mode {:o}): it must be 0700", dir,
                       info.st_mode & 0777);
  }
  return {};
}

std::string socket_path(std::string const& dir, pid_t pid) { return fmt::format("{}/{}.sock", dir, pid); }

std::vector<pid_t> listed_processes(std::string const& dir)
{
  std::vector<pid_t> pids;
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) { return pids; }
  while (auto const* entry = ::readdir(listing)) {
    std::string_view const name{entry->d_name};
    if (!name.ends_with(".sock")) { continue; }
    auto const digits = name.substr(0, name.size() - 5);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    pids.push_back(static_cast<pid_t>(std::strtol(std::string{digits}.c_str(), nullptr, 10)));
  }
  ::closedir(listing);
  std::sort(pids.begin(), pids.end());
  return pids;
}

asking ask(std::string const& dir, pid_t pid, command c)
{
  asking result;
  auto const path = socket_path(dir, pid);
  sockaddr_un address{};
  if (!address_of(path, address)) {
    result.failure = fmt::format("the socket path {} is too long", path);
    return result;
  }
  int const fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    result.failure_errno = errno;
    result.failure       = fmt::format("cannot make a socket: {}", std::strerror(errno));
    return result;
  }
  auto const fail = [&](char const* what) {
    result.failure_errno = errno;
    result.failure       = fmt::format("{} {}: {}", what, path, std::strerror(errno));
    ::close(fd);
    return result;
  };
  if (::connect(fd, reinterpret_cast<sockaddr const*>(&address), sizeof(address)) != 0) {
    return fail("cannot connect to");
  }
  auto request = std::string{request_of(c)} + "\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    return fail("cannot send the request to");
  }
  std::string reply;
  std::array<char, 4096> chunk{};
  for (;;) {
    pollfd ready{fd, POLLIN, 0};
    auto const polled = ::poll(&ready, 1, reply_timeout_seconds * 1000);
    if (polled == 0) {
      errno = ETIMEDOUT;
      return fail("no answer within the time allowed from");
    }
    if (polled < 0) {
      if (errno == EINTR) { continue; }
      return fail("cannot wait for the answer of");
    }
    auto const n = ::recv(fd, chunk.data(), chunk.size(), 0);
    if (n < 0) {
      if (errno == EINTR) { continue; }
      return fail("cannot read the answer of");
    }
    if (n == 0) { break; }
    reply.append(chunk.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  auto const end_of_status = reply.find('\n');
  auto const status        = reply.substr(0, end_of_status);
  if (status != "ok" && status != "error") {
    result.failure = fmt::format("{} answered something other than the shim's control protocol", path);
    return result;
  }
  result.answered = true;
  result.ok       = status == "ok";
  result.text     = end_of_status == std::string::npos ? std::string{} : reply.substr(end_of_status + 1);
  return result;
}

}  // namespace rmm::control
