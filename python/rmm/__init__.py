"""RMM: device memory resources, DeviceBuffer, and allocators for CuPy, Numba and PyTorch.

The package sits on the project's C++ library: every resource is the C++ one, so a stack built
here behaves, logs and counts exactly as the same stack built in C++ or by the preload shim.
"""

from rmm import mr, statistics
from rmm._rmm import RMMError, format_bytes, parse_bytes
from rmm.pylibrmm.device_buffer import DeviceBuffer
from rmm.pylibrmm.logger import (
    get_logging_level,
    level_enum,
    set_logging_level,
    should_log,
)
from rmm.rmm import is_initialized, reinitialize

__version__ = "0.1.0"

__all__ = [
    "DeviceBuffer",
    "RMMError",
    "format_bytes",
    "get_logging_level",
    "is_initialized",
    "level_enum",
    "mr",
    "parse_bytes",
    "reinitialize",
    "set_logging_level",
    "should_log",
    "statistics",
]
