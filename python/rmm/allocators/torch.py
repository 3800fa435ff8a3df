# SPDX-License-Identifier: Apache-2.0
"""PyTorch allocations through rmm: ``torch.cuda.memory.change_current_allocator(rmm_torch_allocator)``.

PyTorch calls the allocate/free pair compiled into rmm's extension (no Python on that path), which
allocates from the per-device resource of the device PyTorch names, on PyTorch's stream.
"""

from rmm import _rmm

try:
    from torch.cuda.memory import CUDAPluggableAllocator
except ImportError:  # PyTorch missing, or older than 2.0
    CUDAPluggableAllocator = None

rmm_torch_allocator = (
    None
    if CUDAPluggableAllocator is None
    else CUDAPluggableAllocator(_rmm.__file__, "rmm_torch_allocate", "rmm_torch_deallocate")
)

__all__ = ["rmm_torch_allocator"]
