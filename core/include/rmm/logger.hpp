// SPDX-License-Identifier: Apache-2.0
#pragma once

// Debug logging: what rmm does internally (upstream growth, errors it cannot throw, ...), as
// opposed to the allocation event log of logging_resource_adaptor.
//
// A logger writes each line to its list of sinks (rmm/logger_sinks.hpp). The default logger's
// one sink is stderr, or the file named by RMM_DEBUG_LOG_FILE (appended to). The run-time
// level starts at `info` (or RMM_DEBUG_LOG_LEVEL: trace, debug, info, warn, error, critical, off);
// levels below RMM_LOG_ACTIVE_LEVEL are compiled out (CMake option RMM_LOGGING_LEVEL).

#include <rmm/logger_sinks.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

namespace rmm {

/// Severity of a debug-log message, least severe first; `off` drops everything.
enum class level_enum : int {
  trace = 0,  ///< step-by-step detail
  debug,      ///< what a developer needs to follow the allocator
  info,       ///< notable events (the default level)
  warn,       ///< something unexpected the program recovers from
  error,      ///< a failed operation
  critical,   ///< a failure the program cannot recover from
  off,        ///< no messages
  n_levels    ///< the number of levels (not a level)
};

/**
 * @brief The name of a level, as RMM_DEBUG_LOG_LEVEL spells it.
 *
 * @param level the level
 * @return "trace", "debug", ..., "off"; "unknown" for a value outside the enumeration
 */
[[nodiscard]] std::string_view to_string(level_enum level) noexcept;

/**
 * @brief The level a name stands for, as RMM_DEBUG_LOG_LEVEL may spell it (in any case).
 *
 * @param name "trace", "debug", "info", "warn", "error", "critical" or "off"
 * @return the level, or nullopt for any other text
 */
[[nodiscard]] std::optional<level_enum> level_from_string(std::string_view name) noexcept;

/// A thread-safe debug logger: writes one line per message, `[time] [name] [level] [pid N] message`,
/// to each of its sinks, dropping messages below its run-time level.
class logger {
 public:
  /**
   * @brief Logs to `sink` (through one stdio_sink_mt); the logger does not close it.
   *
   * @param name the name every line carries
   * @param sink an open file, kept open by the caller while the logger lives
   * @throws rmm::logic_error when `sink` is null
   */
  logger(std::string name, std::FILE* sink);
  /**
   * @brief Logs to the file at `path`, appending (through one basic_file_sink_mt).
   *
   * @param name the name every line carries
   * @param path the file to append to; created if missing
   * @throws rmm::logic_error when the file cannot be opened, naming it and the system's reason
   */
  logger(std::string name, std::string const& path);
  /**
   * @brief Logs to every sink of `sinks`, in order: RMM's `logger(name, {sink, ...})`.
   *
   * @param name the name every line carries
   * @param sinks where lines go; may be empty (sinks() can add some later)
   * @throws rmm::logic_error when one of them is null
   */
  logger(std::string name, std::vector<logger_sink_ptr> sinks);
  /// @brief Lets go of the sinks; each closes its file when its last owner lets go of it.
  ~logger()                        = default;
  logger(logger const&)            = delete;
  logger& operator=(logger const&) = delete;

  /**
   * @brief The sinks every line goes to, to add or remove some, as RMM's tests do.
   *
   * Changing the list is not synchronized with logging: do it while no other thread logs
   * through this logger. A null entry is skipped.
   *
   * @return the list, in the order the sinks are written
   */
  [[nodiscard]] std::vector<logger_sink_ptr>& sinks() noexcept { return sinks_; }
  /**
   * @brief The sinks every line goes to.
   *
   * @return the list, in the order the sinks are written
   */
  [[nodiscard]] std::vector<logger_sink_ptr> const& sinks() const noexcept { return sinks_; }

  /**
   * @brief Sets the run-time level: messages below it are dropped.
   *
   * @param level the new level; `off` drops everything
   */
  void set_level(level_enum level) noexcept { level_.store(level, std::memory_order_relaxed); }
  /**
   * @brief The run-time level.
   *
   * @return the level
   */
  [[nodiscard]] level_enum level() const noexcept { return level_.load(std::memory_order_relaxed); }
  /**
   * @brief Whether a message at `level` would be written.
   *
   * @param level the message's level
   * @return true when `level` is at least level() and is not `off`
   */
  [[nodiscard]] bool should_log(level_enum level) const noexcept
  {
    return level >= this->level() && level != level_enum::off;
  }
  /**
   * @brief Lines at `level` and above are flushed as they are written (default: `warn`).
   *
   * @param level the lowest level flushed at once; `off` flushes only on flush()
   */
  void flush_on(level_enum level) noexcept { flush_level_.store(level, std::memory_order_relaxed); }
  /**
   * @brief The lowest level flushed as it is written.
   *
   * @return the level flush_on() set
   */
  [[nodiscard]] level_enum flush_level() const noexcept { return flush_level_.load(std::memory_order_relaxed); }

  /**
   * @brief Formats and writes a message when should_log(level); formats nothing otherwise.
   *
   * @param level the message's level
   * @param format the fmt format string
   * @param args the values it formats
   */
  template <typename... Args>
  void log(level_enum level, fmt::format_string<Args...> format, Args&&... args)
  {
    if (should_log(level)) { write(level, fmt::format(format, std::forward<Args>(args)...)); }
  }
  /**
   * @brief Logs a message at level `trace`.
   *
   * @param format the fmt format string
   * @param args the values it formats
   */
  template <typename... Args>
  void trace(fmt::format_string<Args...> format, Args&&... args)
  {
    log(level_enum::trace, format, std::forward<Args>(args)...);
  }
  /**
   * @brief Logs a message at level `debug`.
   *
   * @param format the fmt format string
   * @param args the values it formats
   */
  template <typename... Args>
  void debug(fmt::format_string<Args...> format, Args&&... args)
  {
    log(level_enum::debug, format, std::forward<Args>(args)...);
  }
  /**
   * @brief Logs a message at level `info`.
   *
   * @param format the fmt format string
   * @param args the values it formats
   */
  template <typename... Args>
  void info(fmt::format_string<Args...> format, Args&&... args)
  {
    log(level_enum::info, format, std::forward<Args>(args)...);
  }
  /**
   * @brief Logs a message at level `warn`.
   *
   * @param format the fmt format string
   * @param args the values it formats
   */
  template <typename... Args>
  void warn(fmt::format_string<Args...> format, Args&&... args)
  {
    log(level_enum::warn, format, std::forward<Args>(args)...);
  }
  /**
   * @brief Logs a message at level `error`.
   *
   * @param format the fmt format string
   * @param args the values it formats
   */
  template <typename... Args>
  void error(fmt::format_string<Args...> format, Args&&... args)
  {
    log(level_enum::error, format, std::forward<Args>(args)...);
  }
  /**
   * @brief Logs a message at level `critical`.
   *
   * @param format the fmt format string
   * @param args the values it formats
   */
  template <typename... Args>
  void critical(fmt::format_string<Args...> format, Args&&... args)
  {
    log(level_enum::critical, format, std::forward<Args>(args)...);
  }

  /**
   * @brief Writes one already formatted line to every sink, whatever the logger's level. Never
   * throws: a sink that throws misses the line, and the others still get it.
   *
   * Lines at flush_level() and above are flushed at once. Safe to call from several threads: each
   * line reaches every sink whole, and all sinks see the lines in the same order.
   *
   * @param level the level the line is marked with
   * @param message the text, without a trailing newline
   */
  void write(level_enum level, std::string_view message) noexcept;
  /// @brief Flushes every sink; one that throws does not keep the others from flushing.
  void flush() noexcept;

 private:
  std::string name_;
  std::atomic<level_enum> level_{level_enum::info};
  std::atomic<level_enum> flush_level_{level_enum::warn};
  std::mutex mutex_;  // one line at a time, so every sink sees the same order
  std::vector<logger_sink_ptr> sinks_;
};

/**
 * @brief The process-wide logger rmm writes to. Never destroyed, so it is usable during exit.
 *
 * Created on first use, writing to RMM_DEBUG_LOG_FILE (stderr when unset or when the file cannot
 * be opened) at the level RMM_DEBUG_LOG_LEVEL names.
 *
 * @return the logger
 */
logger& default_logger();

}  // namespace rmm

#ifndef RMM_NO_RAPIDS_LOGGER_ALIAS
/// RMM's documentation and tests spell the level and sink types in namespace rapids_logger.
namespace rapids_logger {
using level_enum         = ::rmm::level_enum;          ///< rmm::level_enum, as RMM's documentation spells it
using sink               = ::rmm::logger_sink;         ///< rmm::logger_sink, the sink interface
using sink_ptr           = ::rmm::logger_sink_ptr;     ///< rmm::logger_sink_ptr, how a logger holds a sink
using ostream_sink_mt    = ::rmm::ostream_sink_mt;     ///< rmm::ostream_sink_mt
using basic_file_sink_mt = ::rmm::basic_file_sink_mt;  ///< rmm::basic_file_sink_mt
using stderr_sink_mt     = ::rmm::stderr_sink_mt;      ///< rmm::stderr_sink_mt
}  // namespace rapids_logger
#endif

// Levels: 0 trace, 1 debug, 2 info, 3 warn, 4 error, 5 critical, 6 off.
#ifndef RMM_LOG_ACTIVE_LEVEL
#define RMM_LOG_ACTIVE_LEVEL 2
#endif

#define RMM_DETAIL_LOG(_level, ...)                                   \
  do {                                                                \
    if constexpr (static_cast<int>(_level) >= RMM_LOG_ACTIVE_LEVEL) { \
      ::rmm::default_logger().log(_level, __VA_ARGS__);               \
    }                                                                 \
  } while (0)
#define RMM_LOG_TRACE(...) RMM_DETAIL_LOG(::rmm::level_enum::trace, __VA_ARGS__)
#define RMM_LOG_DEBUG(...) RMM_DETAIL_LOG(::rmm::level_enum::debug, __VA_ARGS__)
#define RMM_LOG_INFO(...) RMM_DETAIL_LOG(::rmm::level_enum::info, __VA_ARGS__)
#define RMM_LOG_WARN(...) RMM_DETAIL_LOG(::rmm::level_enum::warn, __VA_ARGS__)
#define RMM_LOG_ERROR(...) RMM_DETAIL_LOG(::rmm::level_enum::error, __VA_ARGS__)
#define RMM_LOG_CRITICAL(...) RMM_DETAIL_LOG(::rmm::level_enum::critical, __VA_ARGS__)
