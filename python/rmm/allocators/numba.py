# SPDX-License-Identifier: Apache-2.0
"""Numba-CUDA allocations through rmm, as an External Memory Management plugin.

Either ``NUMBA_CUDA_MEMORY_MANAGER=rmm.allocators.numba`` in the environment, or
``numba.cuda.set_memory_manager(RMMNumbaManager)``. Device arrays then come from the current
rmm resource; pinned and mapped host memory stay with Numba.
"""

import ctypes

from numba.cuda import GetIpcHandleMixin, HostOnlyCUDAMemoryManager, MemoryPointer
from numba.cuda.cudadrv import driver as _driver

from rmm import mr
from rmm.pylibrmm.device_buffer import DeviceBuffer

try:
    from numba.cuda import MemoryInfo
except ImportError:  # older Numba keeps it in the driver module
    from numba.cuda.cudadrv.driver import MemoryInfo


def _device_pointer(address: int):
    """The pointer type Numba's driver works with: cuda-python's CUdeviceptr (numba-cuda always
    uses it; older Numba when USE_NV_BINDING is set), else a ctypes integer."""
    if getattr(_driver, "USE_NV_BINDING", True):
        return _driver.binding.CUdeviceptr(address)
    return ctypes.c_uint64(address)


class RMMNumbaManager(GetIpcHandleMixin, HostOnlyCUDAMemoryManager):
    """Numba's device allocations from the current rmm resource."""

    def initialize(self) -> None:
        """Nothing to prepare: the current rmm resource serves every context."""

    def memalloc(self, size: int):
        buffer = DeviceBuffer(size=size)
        address = buffer.ptr
        self.allocations[address] = buffer  # freed when Numba calls the finalizer
        allocations = self.allocations

        def finalizer():
            allocations.pop(address, None)

        return MemoryPointer(self.context, _device_pointer(address), size, finalizer=finalizer)

    def get_memory_info(self):
        free, total = mr.available_device_memory()
        return MemoryInfo(free=free, total=total)

    @property
    def interface_version(self) -> int:
        return 1


# What NUMBA_CUDA_MEMORY_MANAGER=rmm.allocators.numba loads.
_numba_memory_manager = RMMNumbaManager

__all__ = ["RMMNumbaManager"]
