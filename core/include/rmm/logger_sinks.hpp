// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where rmm::logger's lines go. A logger holds a list of sinks and hands each formatted line to
// every one; RMM's code builds that list from rapids_logger sinks, which rmm/logger.hpp aliases to
// these. (rmm::mr::log_sink is another thing: the CSV output of logging_resource_adaptor.)

#include <cstdio>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>

namespace rmm {

enum class level_enum : int;  // defined in rmm/logger.hpp, which includes this header

/// Receives the debug logger's formatted lines. Implement write and flush to send them elsewhere;
/// a logger calls them from any thread that logs, so an implementation shared between loggers, or
/// used outside one, must lock (the `_mt` sinks below do).
class logger_sink {
 public:
  logger_sink()                              = default;
  logger_sink(logger_sink const&)            = delete;
  logger_sink& operator=(logger_sink const&) = delete;
  logger_sink(logger_sink&&)                 = delete;
  logger_sink& operator=(logger_sink&&)      = delete;
  virtual ~logger_sink()                     = default;

  /**
   * @brief Appends one formatted line.
   *
   * @param level the message's level, for sinks that route or filter by it
   * @param line `[time] [name] [level] [pid N] message`, ending in a newline
   * @throws std::exception (or a class derived from it) on failure; the logger drops it
   */
  virtual void write(level_enum level, std::string_view line) = 0;
  /**
   * @brief Makes every line written so far visible to readers.
   *
   * @throws std::exception (or a class derived from it) on failure; the logger drops it
   */
  virtual void flush() = 0;
};

/// How a logger holds its sinks: shared, so one sink may serve several loggers.
using logger_sink_ptr = std::shared_ptr<logger_sink>;

/// Writes to a C stream the caller opened and keeps open; what logger(name, FILE*) writes to.
/// Each line is one fwrite, under the sink's lock, so lines from several threads never interleave.
class stdio_sink_mt : public logger_sink {
 public:
  /**
   * @brief Writes to `file`; the sink does not close it.
   *
   * @param file an open stream, kept open by the caller while the sink lives
   * @throws rmm::logic_error when `file` is null
   */
  explicit stdio_sink_mt(std::FILE* file);

  /**
   * @brief Appends `line` to the stream (buffered as the stream is).
   *
   * @param level unused: every line is written
   * @param line the formatted line
   */
  void write(level_enum level, std::string_view line) override;
  /// @brief Flushes the stream.
  void flush() override;

 protected:
  /**
   * @brief The stream written to.
   *
   * @return the stream given at construction
   */
  [[nodiscard]] std::FILE* file() const noexcept { return file_; }

 private:
  std::mutex mutex_;
  std::FILE* file_;
};

/// Writes to a file it opens and closes (rapids_logger::basic_file_sink_mt).
class basic_file_sink_mt final : public stdio_sink_mt {
 public:
  /**
   * @brief Opens `filename`, created if missing.
   *
   * @param filename the file to write
   * @param truncate true: empty the file first; false: append to what it holds
   * @throws rmm::logic_error naming the file and the system's reason when it cannot be opened, or
   * when its name holds a NUL character (which would end the name there)
   */
  explicit basic_file_sink_mt(std::string filename, bool truncate = false);
  /// @brief Flushes and closes the file.
  ~basic_file_sink_mt() override;

  /**
   * @brief The file written to.
   *
   * @return the name given at construction
   */
  [[nodiscard]] std::string const& filename() const noexcept { return filename_; }

 private:
  std::string filename_;
};

/// Writes to the process's stderr (rapids_logger::stderr_sink_mt); the default logger's sink
/// when RMM_DEBUG_LOG_FILE is unset.
class stderr_sink_mt final : public stdio_sink_mt {
 public:
  /// @brief Writes to stderr.
  stderr_sink_mt();
};

/// Writes to a C++ stream the caller keeps alive while the sink lives (rapids_logger's
/// ostream_sink_mt); a std::ostringstream captures a logger's lines in a test.
class ostream_sink_mt final : public logger_sink {
 public:
  /**
   * @brief Writes to `stream`.
   *
   * @param stream the stream; must outlive the sink
   * @param force_flush true: flush the stream after every line, so it can be read at once
   */
  explicit ostream_sink_mt(std::ostream& stream, bool force_flush = false) noexcept
    : stream_{&stream}, force_flush_{force_flush}
  {
  }

  /**
   * @brief Appends `line` to the stream, flushing it when force_flush was asked for.
   *
   * @param level unused: every line is written
   * @param line the formatted line
   * @throws std::ios_base::failure when the stream's exception mask asks for it
   */
  void write(level_enum level, std::string_view line) override;
  /// @brief Flushes the stream.
  void flush() override;

 private:
  std::mutex mutex_;
  std::ostream* stream_;
  bool force_flush_;
};

}  // namespace rmm
