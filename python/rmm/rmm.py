# SPDX-License-Identifier: Apache-2.0
"""reinitialize: one call that sets every device's resource, as RMM's Python package does."""

from __future__ import annotations

import os
from typing import Any, Callable

from rmm import mr
from rmm._rmm import format_bytes, parse_bytes


def reinitialize(
    pool_allocator: bool = False,
    managed_memory: bool = False,
    initial_pool_size: int | str | None = None,
    maximum_pool_size: int | str | None = None,
    devices: int | list[int] = 0,
    logging: bool = False,
    log_file_name: str | None = None,
    config_file: str | os.PathLike | None = None,
) -> None:
    """Sets the resource of each of ``devices``.

    The stack, bottom first: ManagedMemoryResource when ``managed_memory``, else
    CudaMemoryResource; a PoolMemoryResource of ``initial_pool_size`` (half the free memory when
    None) up to ``maximum_pool_size`` when ``pool_allocator``; a LoggingResourceAdaptor writing
    ``log_file_name`` (RMM_LOG_FILE when None; ".devN" added per device) when ``logging``.

    ``config_file`` builds each device's stack from a TOML configuration instead, as rmm-run and
    the preload shim do; the other stack options must then be left at their defaults.
    Resources are built before any is set, so a failure leaves every device as it was.
    """
    device_list = [devices] if isinstance(devices, int) else list(devices)
    if not device_list:
        raise ValueError("devices is empty: name at least one device")
    if config_file is not None:
        chosen = [
            name
            for name, value, default in (
                ("pool_allocator", pool_allocator, False),
                ("managed_memory", managed_memory, False),
                ("initial_pool_size", initial_pool_size, None),
                ("maximum_pool_size", maximum_pool_size, None),
                ("logging", logging, False),
                ("log_file_name", log_file_name, None),
            )
            if value != default
        ]
        if chosen:
            raise ValueError(
                f"reinitialize: config_file describes the whole stack; remove {', '.join(chosen)} "
                "or put them in the file"
            )
    if not pool_allocator and (initial_pool_size is not None or maximum_pool_size is not None):
        raise ValueError("initial_pool_size and maximum_pool_size need pool_allocator=True")
    initial_pool_size = _pool_size("initial_pool_size", initial_pool_size)
    maximum_pool_size = _pool_size("maximum_pool_size", maximum_pool_size)
    if initial_pool_size is not None and maximum_pool_size is not None and initial_pool_size > maximum_pool_size:
        # RuntimeError and these words, as RMM's reinitialize says it.
        raise RuntimeError(
            f"Initial pool size exceeds the maximum pool size: {format_bytes(initial_pool_size)} > "
            f"{format_bytes(maximum_pool_size)}"
        )

    # The hooks let go of what they hold in the resources about to be replaced; last registered first.
    for func, args, kwargs in reversed(_reinitialize_hooks):
        func(*args, **kwargs)
    built = {}
    for device in device_list:
        mr._device_id(device)
        with mr._on_device(device):
            if config_file is not None:
                built[device] = mr.from_config(config_file, device=device)
                continue
            resource = mr.ManagedMemoryResource() if managed_memory else mr.CudaMemoryResource()
            if pool_allocator:
                resource = mr.PoolMemoryResource(resource, initial_pool_size, maximum_pool_size)
            if logging:
                resource = mr.LoggingResourceAdaptor(resource, log_file_name)
            built[device] = resource
    for device, resource in built.items():
        mr.set_per_device_resource(device, resource)


_reinitialize_hooks: list[tuple[Callable[..., Any], tuple, dict]] = []


def register_reinitialize_hook(func: Callable[..., Any], *args, **kwargs) -> Callable[..., Any]:
    """Calls ``func(*args, **kwargs)`` at each reinitialize, before the new resources are built.

    Libraries that keep memory from the current resources (a cache of buffers) register a hook that
    lets go of it. Hooks run in the reverse order of their registration, after reinitialize's
    arguments have been checked. Returns ``func``, so that it can serve as a decorator.
    """
    _reinitialize_hooks.append((func, args, kwargs))
    return func


def unregister_reinitialize_hook(func: Callable[..., Any]) -> None:
    """Removes every registration of ``func``."""
    _reinitialize_hooks[:] = [hook for hook in _reinitialize_hooks if hook[0] is not func]


def is_initialized() -> bool:
    """Whether reinitialize (or a set_*_resource call) has set a resource."""
    return mr.is_initialized()


def _pool_size(name: str, size: int | str | None) -> int | None:
    """Bytes of a pool size argument; a ValueError that starts as RMM's ("Could not parse")."""
    if size is None:
        return None
    try:
        return parse_bytes(size)
    except ValueError as e:
        raise ValueError(f"Could not parse {name} {size!r} as a byte size: {e}") from None
