// SPDX-License-Identifier: Apache-2.0
#pragma once

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

  /**
   * @brief Appends `text` (whole lines).
   *
   * @param text one or more CSV lines, each ending in a newline
   * @throws std::exception (or a class derived from it) on failure; the adaptor reports it
   */
  virtual void write(std::string_view text) = 0;
  /**
   * @brief Makes everything written so far durable, or visible to readers.
   *
   * @throws std::exception (or a class derived from it) on failure; the adaptor reports it
   */
  virtual void flush() = 0;
};

/// How the logging adaptor holds its sinks: shared, so copies of the adaptor write to the same ones.
using log_sink_ptr = std::shared_ptr<log_sink>;

/// Writes to a file, truncating it first. Throws rmm::logic_error naming the file and the
/// reason when it cannot be opened. Each write goes straight to the file, with no buffer of the C
/// library's: a forked child that exits cannot write its parent's rows a second time.
class file_log_sink final : public log_sink {
 public:
  /**
   * @brief Opens `path` for writing, truncating it.
   *
   * @param path the file to write
   * @throws rmm::logic_error naming the file and the reason when it cannot be opened, or when its
   * name holds a NUL character
   */
  explicit file_log_sink(std::string path);
  /**
   * @brief Writes to a file its caller opened (one it locked, say), and closes it when destroyed.
   *
   * @param fd an open file descriptor, writable; the sink owns it from now on
   * @param path the file's name, for messages
   * @throws rmm::logic_error when `fd` is negative
   */
  file_log_sink(int fd, std::string path);
  /// @brief Closes the file.
  ~file_log_sink() override;

  /**
   * @brief Appends `text` to the file (visible to readers when it returns).
   *
   * @param text one or more CSV lines
   * @throws std::runtime_error when the write fails
   */
  void write(std::string_view text) override;
  /// @brief Nothing to do: every write reached the file already.
  void flush() override {}
  /**
   * @brief The file written to.
   *
   * @return the path given at construction
   */
  [[nodiscard]] std::string const& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_;
};

/// Writes to a stream the caller keeps alive for as long as the adaptor lives.
class ostream_log_sink final : public log_sink {
 public:
  /**
   * @brief Writes to `stream`.
   *
   * @param stream the stream; must outlive every adaptor using the sink
   */
  explicit ostream_log_sink(std::ostream& stream) noexcept : stream_{&stream} {}

  /**
   * @brief Appends `text` to the stream.
   *
   * @param text one or more CSV lines
   * @throws std::runtime_error when the stream is in a failed state after the write
   */
  void write(std::string_view text) override;
  /// @brief Flushes the stream.
  void flush() override;

 private:
  std::ostream* stream_;
};

}  // namespace rmm::mr
