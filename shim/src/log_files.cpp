#include "log_files.hpp"

#include <rmm/detail/error.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rmm::shim {

namespace {

[[noreturn]] void cannot_open(std::string const& path, int error)
{
  RMM_FAIL(
    fmt::format("cannot open the log file '{}' for writing: {}; check that its directory exists and is "
                "writable",
                path, std::strerror(error)));
}

}  // namespace

opened_log open_event_log(std::string const& name)
{
  RMM_EXPECTS(name.find('\0') == std::string::npos,
              "the log file's name contains a NUL character, which would end it there; remove it");
  // Not truncated before the lock is held: the file may be another process's log.
  int const fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) { cannot_open(name, errno); }
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    if (::ftruncate(fd, 0) != 0) {
      auto const error = errno;
      ::close(fd);
      cannot_open(name, error);
    }
    return {fd, name};
  }
  auto const lock_error = errno;
  ::close(fd);
  if (lock_error != EWOULDBLOCK) {
    // A file system without locks: written as before, whoever else may write there.
    int const unlocked = ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (unlocked < 0) { cannot_open(name, errno); }
    return {unlocked, name};
  }
  auto const own  = fmt::format("{}.{}", name, ::getpid());
  int const aside = ::open(own.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (aside < 0) { cannot_open(own, errno); }
  fmt::print(stderr,
             "rmm shim: process {} logs to {}: another process (its parent, or a process started beside it) "
             "writes {}; put %p in the log's name to give every process its own file\n",
             ::getpid(), own, name);
  return {aside, own};
}

}  // namespace rmm::shim
