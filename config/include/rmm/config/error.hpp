#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rmm::config {

/// Where a value came from: a position in a TOML source, an environment variable, or neither (a
/// built-in default).
struct source_location {
  std::string file{};       ///< file name, or the name given to a parsed string; empty if none
  std::uint32_t line{0};    ///< 1-based; 0 when not from a TOML source
  std::uint32_t column{0};  ///< 1-based; 0 when not from a TOML source
  std::string variable{};   ///< environment variable, when the value came from the environment

  [[nodiscard]] bool in_source() const noexcept { return line != 0; }
  [[nodiscard]] bool in_environment() const noexcept { return !variable.empty(); }
  /// "FILE:LINE:COLUMN", "environment variable NAME", or "built-in default".
  [[nodiscard]] std::string to_string() const;
};

/**
 * Everything a user can get wrong in a configuration: one line,
 * "FILE:LINE:COLUMN: found X, expected Y" (or "environment variable NAME: found X, expected Y").
 */
class config_error : public std::runtime_error {
 public:
  config_error(source_location location, std::string found, std::string expected);

  [[nodiscard]] source_location const& location() const noexcept { return location_; }
  [[nodiscard]] std::string const& found() const noexcept { return found_; }
  [[nodiscard]] std::string const& expected() const noexcept { return expected_; }

 private:
  source_location location_;
  std::string found_;
  std::string expected_;
};

}  // namespace rmm::config
