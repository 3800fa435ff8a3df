# SPDX-License-Identifier: Apache-2.0
"""Low-level bindings: DeviceBuffer, memory resources, streams and the debug logger."""

from rmm.pylibrmm import device_buffer, logger, memory_resource, stream
from rmm.pylibrmm.device_buffer import DeviceBuffer

__all__ = ["DeviceBuffer", "device_buffer", "logger", "memory_resource", "stream"]
