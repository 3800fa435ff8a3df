// SPDX-License-Identifier: Apache-2.0
#pragma once
// Handing a C++ rmm::device_buffer to Python without copying its memory.
//
// A C++ extension returns the capsule this function makes; Python adopts it with
// `rmm.DeviceBuffer.from_capsule(capsule)`, which moves the buffer into a DeviceBuffer (its
// memory, stream and resource). A capsule nobody adopts frees the buffer when it is collected.
// The extension must be built against the same rmm headers as the `rmm` package.

#include <rmm/device_buffer.hpp>

#include <Python.h>

#include <memory>

namespace rmm::python {

/// The capsule's name; DeviceBuffer.from_capsule accepts no other.
inline constexpr char const* device_buffer_capsule_name = "rmm.device_buffer";

/**
 * @brief Wraps `buffer` in a PyCapsule that rmm.DeviceBuffer.from_capsule takes over.
 *
 * Call with the GIL held.
 *
 * @param buffer the buffer to hand over; the capsule owns it from now on
 * @return a new reference to the capsule, or nullptr with a Python error set (the buffer is then
 * freed)
 */
inline PyObject* to_device_buffer_capsule(std::unique_ptr<rmm::device_buffer> buffer)
{
  PyObject* capsule = PyCapsule_New(buffer.get(), device_buffer_capsule_name, [](PyObject* self) {
    delete static_cast<rmm::device_buffer*>(PyCapsule_GetPointer(self, device_buffer_capsule_name));
  });
  if (capsule != nullptr) { (void)buffer.release(); }
  return capsule;
}

}  // namespace rmm::python
