// SPDX-License-Identifier: Apache-2.0
#include "channel/control_channel.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace rmm::control {

namespace {

struct known_request {
  command c;
  std::string_view line;
};
constexpr std::array<known_request, 8> requests{{{command::ping, "ping"},
                                                 {command::report, "report"},
                                                 {command::report_json, "report json"},
                                                 {command::release, "release"},
                                                 {command::pause, "pause"},
                                                 {command::pause_discard, "pause discard"},
                                                 {command::pause_keep, "pause keep"},
                                                 {command::resume, "resume"}}};

constexpr std::string_view tag_marker = " tag ";

bool takes_a_tag(command c) noexcept
{
  return c == command::pause || c == command::pause_discard || c == command::pause_keep || c == command::resume;
}

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

std::string request_line(request const& r)
{
  std::string line;
  for (auto const& known : requests) {
    if (known.c == r.c) { line = known.line; }
  }
  if (!r.tag.empty()) { line += std::string{tag_marker} + r.tag; }
  return line;
}

std::optional<request> parse_request(std::string_view line)
{
  std::string tag;
  if (auto const at = line.find(tag_marker); at != std::string_view::npos) {
    tag  = line.substr(at + tag_marker.size());
    line = line.substr(0, at);
    if (tag.empty() || std::any_of(tag.begin(), tag.end(), [](char ch) { return ch <= ' ' || ch > '~'; })) {
      return std::nullopt;
    }
  }
  for (auto const& known : requests) {
    if (known.line == line && (tag.empty() || takes_a_tag(known.c))) { return request{known.c, std::move(tag)}; }
  }
  return std::nullopt;
}

std::string_view request_list() noexcept
{
  return "report, report json, release, pause, pause discard, pause keep, resume (a pause or a resume with 'tag "
         "NAME')";
}

namespace {

/// Whether `path` is a directory owned by this user.
bool own_directory(char const* path)
{
  struct stat info {};
  return path != nullptr && path[0] == '/' && ::stat(path, &info) == 0 && S_ISDIR(info.st_mode) &&
         info.st_uid == ::geteuid();
}

/// This user's home directory: the password database's, else $HOME; empty when neither is a
/// directory of this user's.
std::string home_directory()
{
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr &&
      own_directory(found->pw_dir)) {
    return found->pw_dir;
  }
  if (char const* home = std::getenv("HOME"); own_directory(home)) { return home; }
  return {};
}

}  // namespace

socket_directory_choice choose_socket_directory()
{
  // XDG_RUNTIME_DIR and /run/user/UID are this user's by definition where they exist (systemd makes
  // them 0700); /tmp is everyone's, so the directory there carries the user id and is checked.
  std::vector<std::string> candidates;
  if (char const* runtime = std::getenv("XDG_RUNTIME_DIR"); own_directory(runtime)) {
    candidates.push_back(std::string{runtime} + "/rmm");
  }
  if (auto const run_user = fmt::format("/run/user/{}", ::geteuid()); own_directory(run_user.c_str())) {
    candidates.push_back(run_user + "/rmm");
  }
  candidates.push_back(fmt::format("/tmp/rmm-{}", ::geteuid()));
  auto const home = home_directory();
  if (!home.empty()) { candidates.push_back(home + "/.cache/rmm"); }
  socket_directory_choice choice;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    auto const& dir = candidates[i];
    if (std::find(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(i), dir) !=
        candidates.begin() + static_cast<std::ptrdiff_t>(i)) {
      continue;  // the same directory twice (XDG_RUNTIME_DIR is /run/user/UID)
    }
    if (!home.empty() && dir == home + "/.cache/rmm") {
      (void)::mkdir((home + "/.cache").c_str(), 0700);  // only when it comes to that: made as XDG's would be
    }
    auto const why = prepare_socket_directory(dir);
    if (why.empty()) {
      choice.dir = dir;
      return choice;
    }
    choice.passed_over += (choice.passed_over.empty() ? "" : "; ") + why;
  }
  choice.error = choice.passed_over.empty() ? "no directory for the control sockets: set XDG_RUNTIME_DIR"
                                            : choice.passed_over + "; and no home directory of this user's";
  choice.passed_over.clear();
  return choice;
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

asking ask(std::string const& dir, pid_t pid, request const& r)
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
  auto const line = request_line(r) + "\n";
  if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
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
      // A reset ends the answer as the end of the connection does (the other end closed with input
      // of ours unread, or exited).
      if (errno == ECONNRESET) { break; }
      return fail("cannot read the answer of");
    }
    if (n == 0) { break; }
    reply.append(chunk.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (reply.empty()) {
    result.closed_without_answer = true;
    result.failure               = fmt::format("{} took the request and closed the connection without an answer", path);
    return result;
  }
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
