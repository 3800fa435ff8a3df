# SPDX-License-Identifier: Apache-2.0
"""rmm.DeviceBuffer: untyped device memory from the current (or a given) resource."""

from rmm._rmm import DeviceBuffer, copy_device_to_ptr, copy_host_to_ptr, copy_ptr_to_host

__all__ = ["DeviceBuffer", "copy_device_to_ptr", "copy_host_to_ptr", "copy_ptr_to_host", "to_device"]


def to_device(data, stream=None, mr=None):
    """A new DeviceBuffer holding a copy of host ``data`` (what unpickling a DeviceBuffer calls)."""
    return DeviceBuffer.to_device(data, stream=stream, mr=mr)
