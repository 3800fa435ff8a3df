// SPDX-License-Identifier: Apache-2.0
#include "stacks/log_files.hpp"

#include <rmm/error.hpp>
#include <rmm/environment_variables.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <cstring>

namespace rmm::shim {

namespace {

using rmm::env_var;

/// The user's file name or folder is at fault, not the shim: the message says what to do, without
/// the shim's source location (RMM_FAIL's). Still an rmm::logic_error, as before.
[[noreturn]] void cannot_open(std::string const& path, int error)
{
  throw rmm::logic_error{
    fmt::format("cannot open the log file '{}' for writing: {}; check that its directory exists and is writable", path,
                std::strerror(error))};
}

std::int64_t now_ns() noexcept
{
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// When the program started (note_run_start), or 0 when nobody said.
std::int64_t run_start_ns() noexcept
{
  auto const value = rmm::environment_value(env_var::shim_run_start);
  if (!value) { return 0; }
  std::int64_t ns         = 0;
  auto const [end, error] = std::from_chars(value->data(), value->data() + value->size(), ns);
  return error == std::errc{} && end == value->data() + value->size() ? ns : 0;
}

/// Whether the open file `fd` was written by another process of this program.
bool written_during_this_run(int fd) noexcept
{
  struct stat info {};
  if (::fstat(fd, &info) != 0 || info.st_size == 0) { return false; }
  auto const modified = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  auto const start    = run_start_ns();
  return start != 0 && modified >= start;
}

}  // namespace

void note_run_start() noexcept
{
  if (rmm::environment_value(env_var::shim_run_start)) { return; }
  auto const value = std::to_string(now_ns());
  // The table's names are literals: NUL-terminated.
  (void)::setenv(rmm::name_of(env_var::shim_run_start).data(), value.c_str(), 0);
}

opened_log open_event_log(std::string const& name)
{
  if (name.find('\0') != std::string::npos) {
    throw rmm::logic_error{"the log file's name contains a NUL character, which would end it there; remove it"};
  }
  // Not truncated before it is known to be this process's to write: it may be another's log.
  int const fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) { cannot_open(name, errno); }
  // Held by a live writer, or written by one that ended: another process's. (A file system without
  // locks leaves only the second test.)
  bool const taken = (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) || written_during_this_run(fd);
  if (!taken) {
    if (::ftruncate(fd, 0) != 0) {
      auto const error = errno;
      ::close(fd);
      cannot_open(name, error);
    }
    return {fd, name};
  }
  ::close(fd);
  auto const own  = fmt::format("{}.{}", name, ::getpid());
  int const aside = ::open(own.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (aside < 0) { cannot_open(own, errno); }
  fmt::print(stderr,
             "rmm shim: process {} logs to {}: another process of the program (its parent, or a process started "
             "beside it) writes {}; put %p in the log's name to give every process its own file\n",
             ::getpid(), own, name);
  return {aside, own};
}

}  // namespace rmm::shim
