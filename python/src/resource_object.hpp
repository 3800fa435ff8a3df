// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers for binding resource classes: an __init__ that builds the C++ resource with the GIL
// released (building a pool allocates from the device), and Python callables held by C++.

#include "bindings.hpp"

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace rmm::python {

/// Runs `work` without the GIL and returns its result; `work` must not touch Python objects.
template <class Work>
decltype(auto) without_gil(Work&& work)
{
  nb::gil_scoped_release released;
  return std::forward<Work>(work)();
}

/**
 * A Python callable owned by C++ (a callback resource's functions): released under the GIL, or
 * leaked when the interpreter is already gone (a resource that outlives it, in the per-device
 * table, is destroyed at exit).
 */
class python_callable {
 public:
  explicit python_callable(nb::object callable) : callable_{std::move(callable)} {}
  python_callable(python_callable const&)            = delete;
  python_callable& operator=(python_callable const&) = delete;
  ~python_callable()
  {
    if (!nb::is_alive() || Py_IsInitialized() == 0) {
      (void)callable_.release();
      return;
    }
    nb::gil_scoped_acquire held;
    callable_.reset();
  }

  /// For the garbage collector (tp_traverse), with the GIL held.
  int traverse(visitproc visit, void* arg) const  // the names Py_VISIT expects
  {
    Py_VISIT(callable_.ptr());
    return 0;
  }
  /// Drops the callable (tp_clear, with the GIL held): the resource is being freed in a cycle.
  void clear() noexcept { callable_.reset(); }

  /// Calls with the GIL held (the caller may have released it) and converts the result to `Result`.
  template <class Result, class... Args>
  Result call(Args&&... args) const
  {
    nb::gil_scoped_acquire held;
    if (!callable_.is_valid()) { throw nb::value_error("the resource's Python function was cleared"); }
    nb::object result = callable_(std::forward<Args>(args)...);
    if constexpr (!std::is_void_v<Result>) { return nb::cast<Result>(result); }
  }

 private:
  nb::object callable_;
};

[[nodiscard]] inline std::shared_ptr<python_callable> hold_callable(nb::handle callable, char const* what)
{
  if (!PyCallable_Check(callable.ptr())) {
    throw nb::type_error(
      (std::string{what} + " must be callable, not " + nb::type_name(callable.type()).c_str()).c_str());
  }
  return std::make_shared<python_callable>(nb::borrow(callable));
}

}  // namespace rmm::python
