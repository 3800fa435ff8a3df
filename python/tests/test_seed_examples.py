# SPDX-License-Identifier: Apache-2.0
"""The Python examples of RMM's README, as written there (those that need no other framework)."""

import numpy as np

import rmm


def test_device_buffer_of_a_size():
    buf = rmm.DeviceBuffer(size=100)
    assert buf.size == 100
    assert isinstance(buf.ptr, int) and buf.ptr > 0


def test_device_buffer_from_host_memory_and_back():
    a = np.array([1, 2, 3], dtype="float64")
    buf = rmm.DeviceBuffer.to_device(a.tobytes())
    assert buf.size == 24
    np.testing.assert_array_equal(np.frombuffer(buf.tobytes()), np.array([1.0, 2.0, 3.0]))


def test_managed_memory_as_the_current_resource():
    rmm.mr.set_current_device_resource(rmm.mr.ManagedMemoryResource())
    assert rmm.DeviceBuffer.to_device(b"managed").tobytes() == b"managed"


def test_a_pool_of_one_to_four_gib():
    pool = rmm.mr.PoolMemoryResource(
        rmm.mr.CudaMemoryResource(),
        initial_pool_size="1GiB",  # equivalent to initial_pool_size=2**30
        maximum_pool_size="4GiB",
    )
    rmm.mr.set_current_device_resource(pool)
    assert pool.pool_size() == 2**30
    assert rmm.DeviceBuffer(size=100).size == 100


def test_reinitialize_is_documented():
    assert "pool_allocator" in rmm.reinitialize.__doc__ and "managed_memory" in rmm.reinitialize.__doc__


def test_the_submodules_are_reachable():
    from rmm import allocators, mr
    from rmm.pylibrmm.stream import Stream

    assert rmm.mr is mr and callable(rmm.statistics.enable_statistics)
    assert allocators.__name__ == "rmm.allocators" and isinstance(Stream(), Stream)
