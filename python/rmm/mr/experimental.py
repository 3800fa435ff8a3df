# SPDX-License-Identifier: Apache-2.0
"""Resources whose interface may still change, as RMM marks them experimental."""

from rmm._rmm import CudaAsyncManagedMemoryResource

__all__ = ["CudaAsyncManagedMemoryResource"]
