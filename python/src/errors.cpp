// SPDX-License-Identifier: Apache-2.0
// C++ exceptions as Python exceptions: running out of memory is MemoryError (with the resource's
// message, fragmentation figures included), a bad argument ValueError, a failed CUDA call
// rmm.RMMError. Nothing crosses into Python as a crash or a silent null.

#include "bindings.hpp"

#include <rmm/config/error.hpp>
#include <rmm/error.hpp>

#include <exception>

namespace rmm::python {

void bind_errors(nb::module_& module)
{
  // Registered first, so tried last: the translator below leaves cuda_error to it.
  nb::exception<rmm::cuda_error>(module, "RMMError", PyExc_RuntimeError);
  nb::register_exception_translator([](std::exception_ptr const& thrown, void*) {
    try {
      std::rethrow_exception(thrown);
    } catch (rmm::bad_alloc const& e) {  // out_of_memory included
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (rmm::logic_error const& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (rmm::config::config_error const& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
}

}  // namespace rmm::python
