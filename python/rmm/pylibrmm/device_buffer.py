"""rmm.DeviceBuffer: untyped device memory from the current (or a given) resource."""

from rmm._rmm import DeviceBuffer

__all__ = ["DeviceBuffer"]
