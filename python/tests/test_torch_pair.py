# SPDX-License-Identifier: Apache-2.0
"""The allocate/free pair that rmm.allocators.torch hands PyTorch, called as PyTorch calls it
(through the C ABI), so it is tested without PyTorch."""

import ctypes

import pytest

import rmm
from rmm import mr


@pytest.fixture
def pair():
    library = ctypes.CDLL(rmm._rmm.__file__)
    allocate = library.rmm_torch_allocate
    allocate.restype = ctypes.c_void_p
    allocate.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    deallocate = library.rmm_torch_deallocate
    deallocate.restype = None
    deallocate.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    return allocate, deallocate


def test_the_pair_allocates_from_the_devices_resource(pair):
    allocate, deallocate = pair
    stats = mr.StatisticsResourceAdaptor(mr.PoolMemoryResource(mr.CudaMemoryResource(), "8MiB"))
    mr.set_per_device_resource(0, stats)
    ptr = allocate(4096, 0, None)
    assert ptr and stats.allocation_counts["current_bytes"] == 4096
    buffer = rmm.DeviceBuffer(ptr=ptr, size=4096)  # the memory is usable: copy it
    assert buffer.size == 4096
    deallocate(ptr, 4096, 0, None)
    assert stats.allocation_counts["current_count"] == 1  # only the copy is left


def test_a_failed_allocation_is_null_not_a_crash(pair):
    allocate, deallocate = pair
    mr.set_per_device_resource(0, mr.LimitingResourceAdaptor(mr.CudaMemoryResource(), "1MiB"))
    assert allocate(2 << 20, 0, None) is None
    assert allocate(1 << 20, 99, None) is None  # no such device
    deallocate(None, 0, 99, None)  # reported in the debug log, not raised
