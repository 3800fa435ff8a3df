# SPDX-License-Identifier: Apache-2.0
"""C++ errors as Python exceptions, and resources that live exactly as long as something uses them."""

import gc
import weakref

import pytest

import rmm
from rmm import mr


def test_running_out_of_memory_is_a_memory_error_with_the_figures():
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), "4MiB", "8MiB")
    kept = rmm.DeviceBuffer(size=6 << 20, mr=pool)
    with pytest.raises(MemoryError) as caught:
        rmm.DeviceBuffer(size=4 << 20, mr=pool)
    message = str(caught.value)
    assert "pool_memory_resource" in message and "fragmentation" in message and "maximum 8.00 MiB" in message
    del kept
    rmm.DeviceBuffer(size=4 << 20, mr=pool)  # recovers once memory is freed


def test_the_device_running_out_is_a_memory_error():
    free, _ = mr.available_device_memory()
    with pytest.raises(MemoryError, match="cuda_memory_resource"):
        rmm.DeviceBuffer(size=free + (1 << 30), mr=mr.CudaMemoryResource())


def test_a_failed_cuda_call_is_an_rmm_error():
    with pytest.raises(rmm.RMMError, match="cudaSetDevice"):
        rmm._rmm.set_current_device(99)
    assert issubclass(rmm.RMMError, RuntimeError)


def test_a_bad_argument_is_a_value_error():
    with pytest.raises(ValueError, match="alignment"):
        mr.AlignedResourceAdaptor(mr.CudaMemoryResource(), alignment=3)
    with pytest.raises(ValueError, match="log_file_name"):
        mr.LoggingResourceAdaptor(mr.CudaMemoryResource(), "log\0.csv")


def test_a_size_no_device_can_hold_is_a_memory_error():
    with pytest.raises(MemoryError, match="can never be allocated"):
        mr.FixedSizeMemoryResource(mr.CudaMemoryResource(), block_size=2**64 - 1)


def test_an_adaptor_keeps_its_dropped_upstream_working():
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), "4MiB")
    stats = mr.StatisticsResourceAdaptor(pool)
    pool_ref = weakref.ref(pool)
    del pool
    gc.collect()
    assert pool_ref() is stats.upstream_mr  # the Python upstream lives as long as the adaptor
    buffers = [rmm.DeviceBuffer.to_device(bytes([i]) * 4096, mr=stats) for i in range(100)]
    assert all(buf.tobytes() == bytes([i]) * 4096 for i, buf in enumerate(buffers))
    assert stats.allocation_counts["current_count"] == 100


def test_a_current_resource_with_no_other_reference_keeps_serving():
    calls = []
    backing = mr.CudaMemoryResource()

    def allocate(size, stream):
        calls.append(size)
        return backing.allocate(size, stream)

    mr.set_current_device_resource(
        mr.CallbackMemoryResource(allocate, lambda ptr, size, stream: backing.deallocate(ptr, size, stream))
    )
    del allocate
    gc.collect()
    for size in range(1, 200):
        assert rmm.DeviceBuffer.to_device(b"z" * size).tobytes() == b"z" * size
    assert calls == list(range(1, 200))


def test_a_buffer_outlives_the_resource_it_came_from():
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), "4MiB")
    buf = rmm.DeviceBuffer.to_device(b"survivor", mr=pool)
    del pool
    gc.collect()
    assert buf.tobytes() == b"survivor"
    assert buf.copy().tobytes() == b"survivor"  # the copy comes from the same (still alive) pool
