// SPDX-License-Identifier: Apache-2.0
#pragma once

// Exceptions thrown by rmm, and the macros that throw them (RMM_EXPECTS, RMM_FAIL, RMM_CUDA_TRY,
// RMM_CUDA_TRY_ALLOC, RMM_ASSERT_CUDA_SUCCESS).

#include <new>
#include <stdexcept>
#include <string>

namespace rmm {

/// A precondition was violated: the caller passed something rmm cannot work with.
struct logic_error : public std::logic_error {
  using std::logic_error::logic_error;
};

/// An argument no call could accept: a size whose bytes overflow std::size_t, an alignment that
/// is not a power of two. A std::invalid_argument, as RMM's.
struct invalid_argument : public std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// An index or position outside a container (device_uvector element access).
struct out_of_range : public std::out_of_range {
  using std::out_of_range::out_of_range;
};

/// A CUDA call failed.
struct cuda_error : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An allocation failed for a reason other than running out of memory.
class bad_alloc : public std::bad_alloc {
 public:
  /**
   * @brief An allocation failure explained by `message`.
   *
   * @param message what failed and why
   */
  explicit bad_alloc(std::string message) : bad_alloc{std::string{}, std::move(message)} {}
  /**
   * @brief An allocation failure explained by `message`.
   *
   * @param message what failed and why; must not be null
   */
  explicit bad_alloc(char const* message) : bad_alloc{std::string{message}} {}

  /**
   * @brief The message, after the marker of the exception's kind where it has one.
   *
   * @return the message, valid while the exception lives
   */
  [[nodiscard]] char const* what() const noexcept override { return what_.c_str(); }
  /**
   * @brief The message given at construction, without a marker: for quoting it in another message.
   *
   * @return the message
   */
  [[nodiscard]] std::string const& reason() const noexcept { return reason_; }

 protected:
  /**
   * @brief `message` shown after `marker` by what().
   *
   * @param marker what the exception's kind puts first
   * @param message what failed and why
   */
  bad_alloc(std::string const& marker, std::string message) : reason_{std::move(message)}, what_{marker + reason_} {}

 private:
  std::string reason_;
  std::string what_;
};

/// An allocation failed because the resource (or the device under it) ran out of memory. The
/// message names the request, the resource and what memory was left; what() puts RMM's marker
/// "out_of_memory: " before it, which code written for RMM looks for.
class out_of_memory : public bad_alloc {
 public:
  /**
   * @brief Running out of memory, explained by `message`.
   *
   * @param message what was asked of which resource, and what memory was left
   */
  explicit out_of_memory(std::string message) : bad_alloc{"out_of_memory: ", std::move(message)} {}
  /**
   * @brief Running out of memory, explained by `message`.
   *
   * @param message what was asked of which resource; must not be null
   */
  explicit out_of_memory(char const* message) : out_of_memory{std::string{message}} {}
};

}  // namespace rmm

#include <rmm/detail/error.hpp>
