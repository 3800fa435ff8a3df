// SPDX-License-Identifier: Apache-2.0
#include <rmm/environment_variables.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/logger_sinks.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <ctime>
#include <memory>
#include <string_view>
#include <utility>

#include <unistd.h>

namespace rmm {

namespace {

constexpr std::array<std::string_view, 7> level_names{"trace", "debug", "info", "warn", "error", "critical", "off"};

/// Parses RMM_DEBUG_LOG_LEVEL. An unknown value is reported, never silently ignored.
level_enum level_from_environment()
{
  auto const value = environment_value(env_var::debug_log_level);
  if (!value || value->empty()) { return level_enum::info; }
  if (auto const level = level_from_string(*value)) { return *level; }
  fmt::print(stderr,
             "rmm: {}='{}' is not a log level; expected one of trace, debug, info, warn, error, critical, off. "
             "Using info.\n",
             name_of(env_var::debug_log_level), *value);
  return level_enum::info;
}

logger* make_default_logger()
{
  auto const path = environment_value(env_var::debug_log_file);
  logger* result  = nullptr;
  if (path && !path->empty()) {
    try {
      result = new logger("rmm", std::string{*path});
    } catch (rmm::logic_error const& e) {
      std::fprintf(stderr, "rmm: %s; debug log goes to stderr instead\n", e.what());
    }
  }
  if (result == nullptr) { result = new logger("rmm", {std::make_shared<stderr_sink_mt>()}); }
  result->set_level(level_from_environment());
  return result;
}

}  // namespace

std::optional<level_enum> level_from_string(std::string_view name) noexcept
{
  for (std::size_t i = 0; i < level_names.size(); ++i) {
    auto const& known = level_names[i];
    if (known.size() == name.size() && std::equal(known.begin(), known.end(), name.begin(), [](char a, char b) {
          return a == std::tolower(static_cast<unsigned char>(b));
        })) {
      return static_cast<level_enum>(i);
    }
  }
  return std::nullopt;
}

std::string_view to_string(level_enum level) noexcept
{
  auto const index = static_cast<std::size_t>(level);
  return index < level_names.size() ? level_names[index] : std::string_view{"unknown"};
}

logger::logger(std::string name, std::FILE* sink) : name_{std::move(name)}
{
  // Checked here rather than left to stdio_sink_mt, so the message names the logger.
  RMM_EXPECTS(sink != nullptr, fmt::format("logger '{}': the sink is null; pass an open file (stderr, or one from "
                                           "fopen), or construct the logger with a path",
                                           name_));
  sinks_.push_back(std::make_shared<stdio_sink_mt>(sink));
}

logger::logger(std::string name, std::string const& path)
  : logger{std::move(name), std::vector<logger_sink_ptr>{std::make_shared<basic_file_sink_mt>(path)}}
{
}

logger::logger(std::string name, std::vector<logger_sink_ptr> sinks) : name_{std::move(name)}, sinks_{std::move(sinks)}
{
  for (std::size_t i = 0; i < sinks_.size(); ++i) {
    RMM_EXPECTS(sinks_[i] != nullptr, fmt::format("logger '{}': sink {} of {} is null", name_, i, sinks_.size()));
  }
}

void logger::write(level_enum level, std::string_view message) noexcept
{
  try {
    auto const now    = std::chrono::system_clock::now();
    auto const time   = std::chrono::system_clock::to_time_t(now);
    auto const millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm local{};
    localtime_r(&time, &local);
    std::array<char, 32> stamp{};
    std::strftime(stamp.data(), stamp.size(), "%Y-%m-%d %H:%M:%S", &local);
    auto const line = fmt::format("[{}.{:03}] [{}] [{}] [pid {}] {}\n", stamp.data(), millis, name_, to_string(level),
                                  getpid(), message);
    auto const flush_at  = flush_level();
    bool const flush_now = level >= flush_at && flush_at != level_enum::off;
    std::lock_guard lock{mutex_};
    for (auto const& sink : sinks_) {
      if (sink == nullptr) { continue; }
      try {
        sink->write(level, line);
        if (flush_now) { sink->flush(); }
      } catch (...) {  // one failing sink must not cost the others the line
      }
    }
  } catch (...) {  // a logger that throws would turn a report into a crash
  }
}

void logger::flush() noexcept
{
  try {
    std::lock_guard lock{mutex_};
    for (auto const& sink : sinks_) {
      if (sink == nullptr) { continue; }
      try {
        sink->flush();
      } catch (...) {  // a sink that cannot flush must not keep the others from it
      }
    }
  } catch (...) {  // lock_guard throws std::system_error in theory; flush() never throws
  }
}

logger& default_logger()
{
  static logger* const instance = make_default_logger();  // never destroyed: usable during exit
  return *instance;
}

}  // namespace rmm
