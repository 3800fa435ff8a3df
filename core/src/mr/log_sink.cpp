#include <rmm/detail/error.hpp>
#include <rmm/mr/log_sink.hpp>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace rmm::mr {

file_log_sink::file_log_sink(std::string path) : path_{std::move(path)}, file_{std::fopen(path_.c_str(), "w")}
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
