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
  explicit bad_alloc(std::string message) : message_{std::move(message)} {}
  /**
   * @brief An allocation failure explained by `message`.
   *
   * @param message what failed and why; must not be null
   */
  explicit bad_alloc(char const* message) : message_{message} {}

  /**
   * @brief The message given at construction.
   *
   * @return the message, valid while the exception lives
   */
  [[nodiscard]] char const* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

/// An allocation failed because the resource (or the device under it) ran out of memory. The
/// message names the request, the resource and what memory was left.
class out_of_memory : public bad_alloc {
 public:
  using bad_alloc::bad_alloc;
};

}  // namespace rmm

#include <rmm/detail/error.hpp>
