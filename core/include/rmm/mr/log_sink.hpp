#pragma once

#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace rmm::mr {

/// Where a logging_resource_adaptor writes its CSV text. Implement write and flush to send the
/// log elsewhere; they are called from the adaptor's writer thread, one call at a time.
class log_sink {
 public:
  log_sink()                           = default;
  log_sink(log_sink const&)            = delete;
  log_sink& operator=(log_sink const&) = delete;
  log_sink(log_sink&&)                 = delete;
  log_sink& operator=(log_sink&&)      = delete;
  virtual ~log_sink()                  = default;

  /// Appends `text` (whole lines). Throws on failure; the adaptor reports it.
  virtual void write(std::string_view text) = 0;
  virtual void flush()                      = 0;
};

using log_sink_ptr = std::shared_ptr<log_sink>;

/// Writes to a file, truncating it first. Throws rmm::logic_error naming the file and the
/// reason when it cannot be opened.
class file_log_sink final : public log_sink {
 public:
  explicit file_log_sink(std::string path);
  ~file_log_sink() override;

  void write(std::string_view text) override;
  void flush() override;
  [[nodiscard]] std::string const& path() const noexcept { return path_; }

 private:
  std::string path_;
  std::FILE* file_;
};

/// Writes to a stream the caller keeps alive for as long as the adaptor lives.
class ostream_log_sink final : public log_sink {
 public:
  explicit ostream_log_sink(std::ostream& stream) noexcept : stream_{&stream} {}

  void write(std::string_view text) override;
  void flush() override;

 private:
  std::ostream* stream_;
};

}  // namespace rmm::mr
