# SPDX-License-Identifier: Apache-2.0
"""CUDA streams: rmm's own (Stream()), the default streams, and other libraries' streams.

Stream(obj) wraps a CuPy, Numba or cuda-python stream (through ``__cuda_stream__``, CuPy's ``ptr``
or Numba's ``handle``) and keeps it alive; every rmm call that takes a stream also takes such an
object directly, or an integer handle.
"""

from enum import IntEnum

from rmm._rmm import Stream


class CudaStreamFlags(IntEnum):
    """How a stream rmm creates synchronizes with the legacy default stream."""

    SYNC_DEFAULT = 0  #: cudaStreamDefault: it does
    NON_BLOCKING = 1  #: cudaStreamNonBlocking: it does not


#: cudaStreamDefault (0): the legacy default stream unless the program uses per-thread streams.
DEFAULT_STREAM = Stream._from_handle(0)
#: cudaStreamLegacy (1): the device's legacy default stream, which synchronizes with blocking streams.
LEGACY_DEFAULT_STREAM = Stream._from_handle(1)
#: cudaStreamPerThread (2): the calling thread's own default stream.
PER_THREAD_DEFAULT_STREAM = Stream._from_handle(2)

__all__ = [
    "CudaStreamFlags",
    "DEFAULT_STREAM",
    "LEGACY_DEFAULT_STREAM",
    "PER_THREAD_DEFAULT_STREAM",
    "Stream",
]
