// SPDX-License-Identifier: Apache-2.0
#include <rmm/error.hpp>
#include <rmm/logger_sinks.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace rmm {

namespace {

std::FILE* open_log_file(std::string const& filename, bool truncate)
{
  // fopen would stop at the NUL and open the file named by what comes before it.
  if (auto const nul = filename.find('\0'); nul != std::string::npos) {
    throw rmm::logic_error{fmt::format(
      "cannot open debug log file '{}\\0...': its name holds a NUL character at position {}, which would end it there",
      filename.substr(0, nul), nul)};
  }
  std::FILE* file = std::fopen(filename.c_str(), truncate ? "w" : "a");
  if (file == nullptr) {
    throw rmm::logic_error{fmt::format("cannot open debug log file '{}' for {}: {}", filename,
                                       truncate ? "writing" : "appending", std::strerror(errno))};
  }
  return file;
}

}  // namespace

stdio_sink_mt::stdio_sink_mt(std::FILE* file) : file_{file}
{
  if (file_ == nullptr) {
    throw rmm::logic_error{"stdio_sink_mt: the stream is null; pass an open one (stderr, or one from fopen)"};
  }
}

void stdio_sink_mt::write(level_enum /*level*/, std::string_view line)
{
  std::lock_guard lock{mutex_};
  std::fwrite(line.data(), 1, line.size(), file_);
}

void stdio_sink_mt::flush()
{
  std::lock_guard lock{mutex_};
  std::fflush(file_);
}

basic_file_sink_mt::basic_file_sink_mt(std::string filename, bool truncate)
  : stdio_sink_mt{open_log_file(filename, truncate)}, filename_{std::move(filename)}
{
}

basic_file_sink_mt::~basic_file_sink_mt() { std::fclose(file()); }  // fclose flushes

stderr_sink_mt::stderr_sink_mt() : stdio_sink_mt{stderr} {}

void ostream_sink_mt::write(level_enum /*level*/, std::string_view line)
{
  std::lock_guard lock{mutex_};
  stream_->write(line.data(), static_cast<std::streamsize>(line.size()));
  if (force_flush_) { stream_->flush(); }
}

void ostream_sink_mt::flush()
{
  std::lock_guard lock{mutex_};
  stream_->flush();
}

}  // namespace rmm
