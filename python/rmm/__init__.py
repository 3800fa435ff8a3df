# SPDX-License-Identifier: Apache-2.0
"""RMM: device memory resources, DeviceBuffer, and allocators for CuPy, Numba and PyTorch.

The package sits on the project's C++ library: every resource is the C++ one, so a stack built
here behaves, logs and counts exactly as the same stack built in C++ or by the preload shim.
"""

from rmm import _cuda, mr, statistics
from rmm._cuda import gpu as _gpu  # rmm._cuda.gpu, which RAPIDS code reaches through the package
from rmm._rmm import RMMError, format_bytes, parse_bytes
from rmm._version import __git_commit__, __version__
from rmm.mr import disable_logging, enable_logging, get_log_filenames
from rmm.pylibrmm.device_buffer import DeviceBuffer
from rmm.pylibrmm.logger import (
    flush_logger,
    get_flush_level,
    get_logging_level,
    level_enum,
    set_flush_level,
    set_logging_level,
    should_log,
)
from rmm.rmm import is_initialized, register_reinitialize_hook, reinitialize, unregister_reinitialize_hook

__all__ = [
    "DeviceBuffer",
    "RMMError",
    "disable_logging",
    "enable_logging",
    "flush_logger",
    "format_bytes",
    "get_flush_level",
    "get_log_filenames",
    "get_logging_level",
    "is_initialized",
    "level_enum",
    "mr",
    "parse_bytes",
    "register_reinitialize_hook",
    "reinitialize",
    "set_flush_level",
    "set_logging_level",
    "should_log",
    "statistics",
    "unregister_reinitialize_hook",
]
