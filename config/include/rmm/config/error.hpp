// SPDX-License-Identifier: Apache-2.0
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

  /**
   * @brief Whether the location is a position in a TOML source.
   *
   * @return true when `line` is set
   */
  [[nodiscard]] bool in_source() const noexcept { return line != 0; }
  /**
   * @brief Whether the value came from an environment variable.
   *
   * @return true when `variable` is set
   */
  [[nodiscard]] bool in_environment() const noexcept { return !variable.empty(); }
  /**
   * @brief The location as error messages print it.
   *
   * @return "environment variable NAME", "FILE:LINE:COLUMN", "FILE" (a file as a whole, such as one
   * that cannot be read), or "built-in default"
   */
  [[nodiscard]] std::string to_string() const;
};

/**
 * Everything a user can get wrong in a configuration: one line,
 * "FILE:LINE:COLUMN: found X, expected Y" (or "environment variable NAME: found X, expected Y").
 */
class config_error : public std::runtime_error {
 public:
  /**
   * @brief The error "LOCATION: found FOUND, expected EXPECTED", control characters escaped.
   *
   * @param location where the offending value is
   * @param found what was there
   * @param expected what would have been accepted
   */
  config_error(source_location location, std::string found, std::string expected);

  /**
   * @brief Where the offending value is.
   *
   * @return the location
   */
  [[nodiscard]] source_location const& location() const noexcept { return location_; }
  /**
   * @brief What was found, as the message says it.
   *
   * @return the "found" half of the message
   */
  [[nodiscard]] std::string const& found() const noexcept { return found_; }
  /**
   * @brief What would have been accepted, as the message says it.
   *
   * @return the "expected" half of the message
   */
  [[nodiscard]] std::string const& expected() const noexcept { return expected_; }

 private:
  source_location location_;
  std::string found_;
  std::string expected_;
};

}  // namespace rmm::config
