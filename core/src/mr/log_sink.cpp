#include <rmm/detail/error.hpp>
#include <rmm/mr/log_sink.hpp>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rmm::mr {

namespace {

std::FILE* open_for_writing(std::string const& path)
{
  // fopen would stop at the NUL and create the file named by what comes before it.
  if (auto const nul = path.find('\0'); nul != std::string::npos) {
    RMM_FAIL("cannot open the log file '" + path.substr(0, nul) +
             "\\0...': its name contains a NUL character "
             "at position " +
             std::to_string(nul) + ", which would end it there; remove the NUL from the name");
  }
  return std::fopen(path.c_str(), "w");
}

}  // namespace

file_log_sink::file_log_sink(std::string path) : path_{std::move(path)}, file_{open_for_writing(path_)}
{
  if (file_ == nullptr) {
    RMM_FAIL("cannot open the log file '" + path_ + "' for writing: " + std::strerror(errno) +
             "; check that its directory exists and is writable");
  }
}

file_log_sink::~file_log_sink() { std::fclose(file_); }

void file_log_sink::write(std::string_view text)
{
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    throw std::runtime_error{"writing to '" + path_ + "' failed: " + std::strerror(errno)};
  }
}

void file_log_sink::flush()
{
  if (std::fflush(file_) != 0) { throw std::runtime_error{"flushing '" + path_ + "' failed: " + std::strerror(errno)}; }
}

void ostream_log_sink::write(std::string_view text)
{
  stream_->write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!*stream_) { throw std::runtime_error{"writing to the log stream failed"}; }
}

void ostream_log_sink::flush() { stream_->flush(); }

}  // namespace rmm::mr
