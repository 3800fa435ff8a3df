# SPDX-License-Identifier: Apache-2.0
"""Memory resources, and the resource each device allocates from.

Every class is the C++ library's resource of the same name: ``PoolMemoryResource`` is
``rmm::mr::pool_memory_resource``, and so on. Sizes are ints or strings such as ``"1GiB"``.
An adaptor keeps its upstream alive (``upstream_mr``); a resource set for a device stays alive
while it is set. Pools and adaptors derive from ``UpstreamResourceAdaptor``. Resources whose
interface may still change are in ``rmm.mr.experimental``.
"""

from __future__ import annotations

import os
import threading

from rmm import _rmm
from rmm._rmm import (
    AlignedResourceAdaptor,
    ArenaMemoryResource,
    BinningMemoryResource,
    CallbackMemoryResource,
    CudaAsyncMemoryResource,
    CudaAsyncViewMemoryResource,
    CudaMemoryResource,
    DeviceMemoryResource,
    FailureCallbackResourceAdaptor,
    FixedSizeMemoryResource,
    LimitingResourceAdaptor,
    LoggingResourceAdaptor,
    ManagedMemoryResource,
    PinnedHostMemoryResource,
    PoolMemoryResource,
    PrefetchResourceAdaptor,
    SamHeadroomMemoryResource,
    StatisticsResourceAdaptor,
    SystemMemoryResource,
    ThreadSafeResourceAdaptor,
    TrackingResourceAdaptor,
    UpstreamResourceAdaptor,
    available_device_memory,
)
from rmm.mr import experimental

# The Python object set for each device: it keeps the C++ stack alive and is what the getters
# return. The C++ table holds the same resource; both change together, under the lock.
_per_device_mrs: dict[int, DeviceMemoryResource] = {}
_lock = threading.Lock()


def _device_id(device) -> int:
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"device must be an int, not {type(device).__name__}")
    count = _rmm.get_num_devices()
    if not 0 <= device < count:
        raise ValueError(f"device {device} does not exist: {count} device(s) are visible")
    return device


def set_per_device_resource(device: int, mr: DeviceMemoryResource) -> None:
    """Makes ``mr`` the resource of ``device``; set it before anything allocates there."""
    device = _device_id(device)
    if not isinstance(mr, DeviceMemoryResource):
        raise TypeError(f"mr must be an rmm.mr.DeviceMemoryResource, not {type(mr).__name__}")
    with _lock:
        _rmm._set_per_device_resource(device, mr)
        _per_device_mrs[device] = mr


def get_per_device_resource(device: int) -> DeviceMemoryResource:
    """The resource of ``device``: a CudaMemoryResource until another is set."""
    device = _device_id(device)
    with _lock:
        mr = _per_device_mrs.get(device)
        if mr is None:
            mr = CudaMemoryResource()
            _rmm._set_per_device_resource(device, mr)
            _per_device_mrs[device] = mr
        return mr


def set_current_device_resource(mr: DeviceMemoryResource) -> None:
    """Makes ``mr`` the resource of the current device."""
    set_per_device_resource(_rmm.get_current_device(), mr)


def get_current_device_resource() -> DeviceMemoryResource:
    """The resource of the current device."""
    return get_per_device_resource(_rmm.get_current_device())


def get_per_device_resource_type(device: int) -> type:
    return type(get_per_device_resource(device))


def get_current_device_resource_type() -> type:
    return type(get_current_device_resource())


def is_initialized() -> bool:
    """Whether a resource was set for any device (by reinitialize or set_*_resource)."""
    return bool(_per_device_mrs)


def _devices_with_resources() -> list[int]:
    with _lock:
        return sorted(_per_device_mrs) or [_rmm.get_current_device()]


def enable_logging(log_file_name: str | None = None) -> None:
    """Wraps each device's resource in a LoggingResourceAdaptor (file name: as that adaptor's)."""
    for device in _devices_with_resources():
        mr = get_per_device_resource(device)
        if not isinstance(mr, LoggingResourceAdaptor):
            with _on_device(device):
                set_per_device_resource(device, LoggingResourceAdaptor(mr, log_file_name))


def disable_logging() -> None:
    """Removes the LoggingResourceAdaptor enable_logging put on each device's resource."""
    for device in _devices_with_resources():
        mr = get_per_device_resource(device)
        if isinstance(mr, LoggingResourceAdaptor):
            mr.flush()
            set_per_device_resource(device, mr.upstream_mr)


def get_log_filenames() -> dict[int, str | None]:
    """{device: the log file of its LoggingResourceAdaptor, or None}."""
    with _lock:
        mrs = dict(_per_device_mrs)
    return {
        device: mr.get_file_name() if isinstance(mr, LoggingResourceAdaptor) else None
        for device, mr in mrs.items()
    }


def _flush_logs() -> None:
    """Writes out every device's LoggingResourceAdaptor (the one enable_logging put there)."""
    with _lock:
        mrs = list(_per_device_mrs.values())
    for mr in mrs:
        if isinstance(mr, LoggingResourceAdaptor):
            mr.flush()


class _on_device:
    """Makes ``device`` current for a block, restoring the previous device afterwards."""

    def __init__(self, device: int):
        self._device = device

    def __enter__(self):
        self._previous = _rmm.get_current_device()
        if self._device != self._previous:
            _rmm.set_current_device(self._device)
        return self

    def __exit__(self, *exc):
        if self._device != self._previous:
            _rmm.set_current_device(self._previous)
        return False


def from_config(
    path: str | os.PathLike | None = None, *, toml: str | None = None, device: int | None = None
) -> DeviceMemoryResource:
    """Builds a resource stack from the TOML configuration rmm-run and the preload shim read.

    ``path`` names a file, ``toml`` gives the text itself; with neither, RMM_CONFIG's file or the
    built-in stack serves. Environment overrides (RMM_<TYPE>_<KEY>) apply as everywhere. The stack
    is built on ``device`` (the current device by default). ValueError names what is wrong.
    """
    if path is not None and toml is not None:
        raise ValueError("from_config takes a path or a toml string, not both")
    device = _rmm.get_current_device() if device is None else _device_id(device)
    return _rmm._build_from_config(None if path is None else os.fspath(path), toml, device)


__all__ = [
    "AlignedResourceAdaptor",
    "ArenaMemoryResource",
    "BinningMemoryResource",
    "CallbackMemoryResource",
    "CudaAsyncMemoryResource",
    "CudaAsyncViewMemoryResource",
    "CudaMemoryResource",
    "DeviceMemoryResource",
    "FailureCallbackResourceAdaptor",
    "FixedSizeMemoryResource",
    "LimitingResourceAdaptor",
    "LoggingResourceAdaptor",
    "ManagedMemoryResource",
    "PinnedHostMemoryResource",
    "PoolMemoryResource",
    "PrefetchResourceAdaptor",
    "SamHeadroomMemoryResource",
    "StatisticsResourceAdaptor",
    "SystemMemoryResource",
    "ThreadSafeResourceAdaptor",
    "TrackingResourceAdaptor",
    "UpstreamResourceAdaptor",
    "available_device_memory",
    "disable_logging",
    "enable_logging",
    "experimental",
    "from_config",
    "get_current_device_resource",
    "get_current_device_resource_type",
    "get_log_filenames",
    "get_per_device_resource",
    "get_per_device_resource_type",
    "is_initialized",
    "set_current_device_resource",
    "set_per_device_resource",
]
