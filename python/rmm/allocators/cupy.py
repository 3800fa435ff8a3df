# SPDX-License-Identifier: Apache-2.0
"""CuPy allocations through rmm: ``cupy.cuda.set_allocator(rmm_cupy_allocator)``.

Each allocation is a DeviceBuffer from the current device's resource, ordered on CuPy's current
stream. This does not change the resource: set it first (rmm.reinitialize, set_current_device_resource).
"""

from rmm.pylibrmm.device_buffer import DeviceBuffer

try:
    import cupy
except ImportError:
    cupy = None


def rmm_cupy_allocator(nbytes: int):
    """A cupy.cuda.MemoryPointer to ``nbytes`` of memory from the current rmm resource."""
    if cupy is None:
        raise ModuleNotFoundError("rmm_cupy_allocator needs CuPy, which is not installed")
    stream = cupy.cuda.get_current_stream()
    buffer = DeviceBuffer(size=nbytes, stream=stream.ptr)
    # The buffer is on the current device; saying so also covers the null pointer of 0 bytes.
    memory = cupy.cuda.memory.UnownedMemory(buffer.ptr, nbytes, buffer, cupy.cuda.device.get_device_id())
    return cupy.cuda.memory.MemoryPointer(memory, 0)


__all__ = ["rmm_cupy_allocator"]
