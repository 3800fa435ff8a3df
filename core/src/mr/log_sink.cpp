// SPDX-License-Identifier: Apache-2.0
#include <rmm/detail/error.hpp>
#include <rmm/mr/log_sink.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rmm::mr {

namespace {

// A file name or a folder the user gave is at fault, not rmm: the messages below name the file and
// what to do, without rmm's source location (RMM_FAIL's), which means nothing to the user. The
// exception is still rmm::logic_error, as callers catch.

int open_for_writing(std::string const& path)
{
  // open would stop at the NUL and create the file named by what comes before it.
  if (auto const nul = path.find('\0'); nul != std::string::npos) {
    throw rmm::logic_error{"cannot open the log file '" + path.substr(0, nul) +
                           "\\0...': its name contains a NUL character at position " + std::to_string(nul) +
                           ", which would end it there; remove the NUL from the name"};
  }
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

}  // namespace

file_log_sink::file_log_sink(std::string path) : path_{std::move(path)}, fd_{open_for_writing(path_)}
{
  if (fd_ < 0) {
    throw rmm::logic_error{"cannot open the log file '" + path_ + "' for writing: " + std::strerror(errno) +
                           "; check that its directory exists and is writable"};
  }
}

file_log_sink::file_log_sink(int fd, std::string path) : path_{std::move(path)}, fd_{fd}
{
  RMM_EXPECTS(fd_ >= 0, "file_log_sink for '" + path_ + "' needs an open file descriptor, got " + std::to_string(fd));
}

file_log_sink::~file_log_sink() { ::close(fd_); }

void file_log_sink::write(std::string_view text)
{
  while (!text.empty()) {
    auto const written = ::write(fd_, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) { continue; }
      throw std::runtime_error{"writing to '" + path_ + "' failed: " + std::strerror(errno)};
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

void ostream_log_sink::write(std::string_view text)
{
  stream_->write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!*stream_) { throw std::runtime_error{"writing to the log stream failed"}; }
}

void ostream_log_sink::flush() { stream_->flush(); }

}  // namespace rmm::mr
