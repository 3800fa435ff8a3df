# SPDX-License-Identifier: Apache-2.0
"""Every resource and adaptor of rmm.mr, built and used from Python."""

import sys

import numpy as np
import pytest

import rmm
from rmm import mr


def bottoms():
    return [mr.CudaMemoryResource(), mr.ManagedMemoryResource(), mr.CudaAsyncMemoryResource()]


_view_owners = []  # a view does not own its CUDA pool: the owner must outlive it


def async_view():
    owner = mr.CudaAsyncMemoryResource()
    _view_owners.append(owner)
    return mr.CudaAsyncViewMemoryResource(owner.pool_handle())


def stacks():
    """(name, factory) for every class that can serve device buffers here."""
    return [
        ("cuda", lambda: mr.CudaMemoryResource()),
        ("managed", lambda: mr.ManagedMemoryResource()),
        ("pinned_host", lambda: mr.PinnedHostMemoryResource()),
        ("cuda_async", lambda: mr.CudaAsyncMemoryResource(initial_pool_size="16MiB", release_threshold="32MiB")),
        ("cuda_async_view", async_view),
        ("pool", lambda: mr.PoolMemoryResource(mr.CudaMemoryResource(), "16MiB", "64MiB")),
        ("fixed_size", lambda: mr.FixedSizeMemoryResource(mr.CudaMemoryResource(), block_size="1MiB")),
        ("binning", lambda: mr.BinningMemoryResource(mr.CudaMemoryResource(), 8, 16)),
        ("arena", lambda: mr.ArenaMemoryResource(mr.CudaMemoryResource(), arena_size="64MiB")),
        ("statistics", lambda: mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())),
        ("tracking", lambda: mr.TrackingResourceAdaptor(mr.CudaMemoryResource())),
        ("limiting", lambda: mr.LimitingResourceAdaptor(mr.CudaMemoryResource(), "64MiB")),
        ("failure_callback", lambda: mr.FailureCallbackResourceAdaptor(mr.CudaMemoryResource(), lambda n: False)),
        ("prefetch", lambda: mr.PrefetchResourceAdaptor(mr.ManagedMemoryResource())),
        ("aligned", lambda: mr.AlignedResourceAdaptor(mr.CudaMemoryResource(), 4096)),
        ("thread_safe", lambda: mr.ThreadSafeResourceAdaptor(mr.CudaMemoryResource())),
    ]


@pytest.mark.parametrize("name, factory", stacks(), ids=[name for name, _ in stacks()])
def test_each_resource_serves_buffers_that_keep_their_data(name, factory):
    resource = factory()
    assert isinstance(resource, mr.DeviceMemoryResource)
    buffers = [rmm.DeviceBuffer.to_device(bytes([i]) * (1000 + i), mr=resource) for i in range(20)]
    for i, buf in enumerate(buffers):
        assert buf.tobytes() == bytes([i]) * (1000 + i), name
    addresses = {buf.ptr for buf in buffers}
    assert len(addresses) == len(buffers)


@pytest.mark.parametrize("name, factory", stacks(), ids=[name for name, _ in stacks()])
def test_each_resource_allocates_and_frees_through_python(name, factory):
    resource = factory()
    ptr = resource.allocate(4096)
    assert ptr != 0
    resource.deallocate(ptr, 4096)


def test_system_memory_resource_serves_or_says_why_not():
    # Only devices that reach pageable host memory (HMM, ATS) can use it; the emulator's cannot.
    try:
        system = mr.SystemMemoryResource()
    except ValueError as refused:
        assert "system" in str(refused)
        return
    assert rmm.DeviceBuffer.to_device(b"host memory", mr=system).tobytes() == b"host memory"


def test_an_adaptor_names_its_upstream():
    base = mr.CudaMemoryResource()
    pool = mr.PoolMemoryResource(base, 1 << 20)
    stats = mr.StatisticsResourceAdaptor(pool)
    assert stats.upstream_mr is pool and pool.upstream_mr is base and base.upstream_mr is None
    assert stats.get_upstream() is pool


def test_an_upstream_must_be_a_resource():
    with pytest.raises(TypeError, match="upstream_mr"):
        mr.PoolMemoryResource("cuda", 1 << 20)


def test_pool_sizes_as_ints_or_strings():
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), initial_pool_size="2MiB", maximum_pool_size=8 << 20)
    assert pool.pool_size() == 2 << 20
    with pytest.raises(ValueError, match="initial_pool_size"):
        mr.PoolMemoryResource(mr.CudaMemoryResource(), initial_pool_size="2 MB")


def test_pool_defaults_to_half_the_free_memory():
    free, _ = mr.available_device_memory()
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource())
    assert abs(pool.pool_size() - free // 2) <= 2 << 20


def test_pool_statistics_and_release():
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), "4MiB", "64MiB")
    held = [rmm.DeviceBuffer(size=1 << 20, mr=pool) for _ in range(8)]
    stats = pool.pool_statistics()
    assert stats["allocated_bytes"] >= 8 << 20 and stats["reserved_bytes"] == pool.pool_size()
    del held
    assert pool.pool_statistics()["allocated_bytes"] == 0
    assert 0.0 <= pool.pool_statistics()["fragmentation"] <= 1.0
    assert pool.pool_statistics()["moved_bytes"] == 0  # nothing was fragmented enough to move
    pool.release()


def test_binning_bins_and_their_resources():
    base = mr.CudaMemoryResource()
    binning = mr.BinningMemoryResource(base)
    assert binning.bin_sizes == []
    own_bin = mr.FixedSizeMemoryResource(base, block_size=1 << 16)
    binning.add_bin(1 << 16, own_bin)
    binning.add_bin("1KiB")
    binning.add_bin(1 << 16)  # a size with a bin keeps it: a no-op, as RMM documents
    assert binning.bin_sizes == [1024, 1 << 16]
    assert binning.bin_mrs == [own_bin]
    assert rmm.DeviceBuffer.to_device(b"x" * 5000, mr=binning).tobytes() == b"x" * 5000
    with pytest.raises(ValueError, match="both"):
        mr.BinningMemoryResource(base, 10)


def test_fixed_size_block_size():
    fixed = mr.FixedSizeMemoryResource(mr.CudaMemoryResource(), block_size="64KiB", blocks_to_preallocate=4)
    assert fixed.get_block_size() == 64 << 10
    with pytest.raises(MemoryError):
        fixed.allocate(128 << 10)


def test_callback_resource_calls_python():
    calls = []
    backing = mr.CudaMemoryResource()

    def allocate(size, stream):
        calls.append(("allocate", size, stream.value))
        return backing.allocate(size, stream)

    def deallocate(ptr, size, stream):
        calls.append(("deallocate", size, stream.value))
        backing.deallocate(ptr, size, stream)

    callback = mr.CallbackMemoryResource(allocate, deallocate)
    buf = rmm.DeviceBuffer.to_device(b"via python", mr=callback)
    assert buf.tobytes() == b"via python"
    del buf
    assert calls == [("allocate", 10, 0), ("deallocate", 10, 0)]


def test_callback_errors_reach_the_caller():
    def allocate(size, stream):
        raise KeyError("no memory here")

    callback = mr.CallbackMemoryResource(allocate, lambda ptr, size, stream: None)
    # As RMM's: RuntimeError with the callback's message, the original as its cause.
    with pytest.raises(RuntimeError, match="no memory here") as raised:
        rmm.DeviceBuffer(size=10, mr=callback)
    assert isinstance(raised.value.__cause__, KeyError)

    def allocate_runtime(size, stream):
        raise RuntimeError("as it is")

    with pytest.raises(RuntimeError, match="as it is") as raised:
        rmm.DeviceBuffer(size=10, mr=mr.CallbackMemoryResource(allocate_runtime, lambda ptr, size, stream: None))
    assert raised.value.__cause__ is None
    with pytest.raises(TypeError, match="callable"):
        mr.CallbackMemoryResource(allocate, "not a function")


def test_a_failing_deallocate_callback_is_reported_not_raised(monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    backing = mr.CudaMemoryResource()

    def deallocate(ptr, size, stream):
        backing.deallocate(ptr, size, stream)
        raise RuntimeError("free failed")

    callback = mr.CallbackMemoryResource(lambda size, stream: backing.allocate(size, stream), deallocate)
    buf = rmm.DeviceBuffer(size=10, mr=callback)
    del buf
    messages = [str(report.exc_value) for report in reported]
    reported.clear()  # the report's traceback holds this frame: break the cycle
    assert messages == ["free failed"]


def test_tracking_lists_outstanding_allocations():
    tracking = mr.TrackingResourceAdaptor(mr.CudaMemoryResource())
    a = rmm.DeviceBuffer(size=100, mr=tracking)
    b = rmm.DeviceBuffer(size=300, mr=tracking)
    assert tracking.get_allocated_bytes() == 400
    assert tracking.get_outstanding_allocations() == {a.ptr: 100, b.ptr: 300}
    assert str(300) in tracking.get_outstanding_allocations_str()
    del a, b
    assert tracking.get_allocated_bytes() == 0
    assert tracking.get_outstanding_allocations_str() == ""  # as RMM's, when nothing is outstanding


def test_limiting_refuses_beyond_the_limit():
    limiting = mr.LimitingResourceAdaptor(mr.CudaMemoryResource(), allocation_limit="1MiB")
    kept = rmm.DeviceBuffer(size=768 << 10, mr=limiting)
    assert limiting.get_allocated_bytes() == 768 << 10 and limiting.get_allocation_limit() == 1 << 20
    with pytest.raises(MemoryError, match="limit"):
        rmm.DeviceBuffer(size=512 << 10, mr=limiting)
    del kept
    rmm.DeviceBuffer(size=512 << 10, mr=limiting)


def test_failure_callback_decides_whether_to_retry():
    limiting = mr.LimitingResourceAdaptor(mr.CudaMemoryResource(), 1 << 20)
    hog = [rmm.DeviceBuffer(size=1 << 20, mr=limiting)]
    seen = []

    def on_failure(nbytes):
        seen.append(nbytes)
        if hog:
            hog.pop()  # free memory, then ask for a retry
            return True
        return False

    adaptor = mr.FailureCallbackResourceAdaptor(limiting, on_failure)
    rmm.DeviceBuffer(size=4096, mr=adaptor)
    assert seen == [4096]
    big = rmm.DeviceBuffer(size=1 << 20, mr=adaptor)
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=1 << 20, mr=adaptor)
    assert seen == [4096, 1 << 20]
    del big


def test_failure_callback_sees_a_callback_resources_memory_error():
    def allocate(size, stream):
        raise MemoryError("no room in the callback resource")

    upstream = mr.CallbackMemoryResource(allocate, lambda ptr, size, stream: None)
    seen = []

    def on_failure(nbytes):
        seen.append(nbytes)
        return len(seen) < 3  # two retries, then give up

    adaptor = mr.FailureCallbackResourceAdaptor(upstream, on_failure)
    with pytest.raises(MemoryError, match="no room in the callback resource"):
        rmm.DeviceBuffer(size=100, mr=adaptor)
    assert seen == [100, 100, 100]


def test_aligned_adaptor_aligns():
    aligned = mr.AlignedResourceAdaptor(mr.CudaMemoryResource(), alignment=1 << 16)
    assert aligned.alignment == 1 << 16
    for size in (1, 1000, 70000):
        assert rmm.DeviceBuffer(size=size, mr=aligned).ptr % (1 << 16) == 0


def test_current_and_per_device_resources():
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), 1 << 20)
    mr.set_current_device_resource(pool)
    assert mr.get_current_device_resource() is pool
    assert mr.get_per_device_resource(0) is pool
    assert mr.get_current_device_resource_type() is mr.PoolMemoryResource
    stats = mr.StatisticsResourceAdaptor(pool)
    mr.set_per_device_resource(0, stats)
    rmm.DeviceBuffer(size=10)
    assert stats.allocation_counts["total_count"] == 1


def test_per_device_arguments_are_checked():
    with pytest.raises(ValueError, match="does not exist"):
        mr.set_per_device_resource(99, mr.CudaMemoryResource())
    with pytest.raises(TypeError, match="DeviceMemoryResource"):
        mr.set_current_device_resource("pool")
    with pytest.raises(TypeError, match="int"):
        mr.get_per_device_resource("0")


def test_available_device_memory():
    free, total = mr.available_device_memory()
    assert 0 < free <= total


def test_from_config_builds_the_configured_stack():
    stack = mr.from_config(toml='[[resource]]\ntype = "pool"\ninitial_size = "4MiB"\n[[resource]]\ntype = "cuda"\n')
    assert isinstance(stack, mr.DeviceMemoryResource)
    assert rmm.DeviceBuffer.to_device(b"configured", mr=stack).tobytes() == b"configured"


def test_from_config_errors_name_the_problem(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[[resource]]\ntype = "pol"\n')
    with pytest.raises(ValueError, match="pool"):
        mr.from_config(path)
    with pytest.raises(ValueError, match="not both"):
        mr.from_config(path, toml="")


def test_numpy_arrays_round_trip_through_a_pool():
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), "8MiB")
    data = np.random.default_rng(1).random(10000)
    buf = rmm.DeviceBuffer.to_device(data, mr=pool)
    np.testing.assert_array_equal(buf.copy_to_host().view("float64"), data)


def test_cuda_async_exports_with_every_handle_type_asked_for():
    from rmm._cuda import gpu

    pool_supported_handle_types = 119  # cudaDevAttrMemoryPoolSupportedHandleTypes
    posix, fabric = 0x1, 0x8
    supported = gpu.getDeviceAttribute(pool_supported_handle_types, gpu.getDevice())
    for enable_ipc, enable_fabric in ((True, False), (False, True), (True, True)):
        wanted = (posix if enable_ipc else 0) | (fabric if enable_fabric else 0)
        if supported & wanted == wanted:
            resource = mr.CudaAsyncMemoryResource(enable_ipc=enable_ipc, enable_fabric=enable_fabric)
            assert rmm.DeviceBuffer.to_device(b"exportable", mr=resource).tobytes() == b"exportable"
        else:
            with pytest.raises(RuntimeError, match="cannot export pool memory with handle type"):
                mr.CudaAsyncMemoryResource(enable_ipc=enable_ipc, enable_fabric=enable_fabric)


def test_a_cycle_through_a_resources_python_functions_is_collected():
    import gc
    import weakref

    backing = mr.CudaMemoryResource()

    def cycle_through_callback():
        holder = {}
        callback = mr.CallbackMemoryResource(
            lambda size, stream: holder["mr"].__class__ and backing.allocate(size, stream),
            lambda ptr, size, stream: backing.deallocate(ptr, size, stream),
        )
        holder["mr"] = callback  # callback -> lambda -> holder -> callback
        return weakref.ref(callback)

    def cycle_through_failure_callback():
        holder = {}
        adaptor = mr.FailureCallbackResourceAdaptor(backing, lambda nbytes: holder["mr"] is None)
        holder["mr"] = adaptor
        return weakref.ref(adaptor)

    for make in (cycle_through_callback, cycle_through_failure_callback):
        ref = make()
        gc.collect()
        assert ref() is None, f"{make.__name__}: the cycle was never freed"


def test_pools_and_adaptors_are_upstream_resource_adaptors():
    base = mr.CudaMemoryResource()
    pool = mr.PoolMemoryResource(base, 1 << 20)
    adaptors = [
        pool,
        mr.StatisticsResourceAdaptor(pool),
        mr.TrackingResourceAdaptor(pool),
        mr.LimitingResourceAdaptor(pool, 1 << 20),
        mr.FixedSizeMemoryResource(base),
        mr.ArenaMemoryResource(base, 1 << 20),
        mr.BinningMemoryResource(base),
        mr.PrefetchResourceAdaptor(base),
        mr.AlignedResourceAdaptor(base),
        mr.ThreadSafeResourceAdaptor(base),
    ]
    for adaptor in adaptors:
        assert isinstance(adaptor, mr.UpstreamResourceAdaptor), type(adaptor).__name__
        assert adaptor.get_upstream() is not None
    bottoms = [base, mr.ManagedMemoryResource(), mr.PinnedHostMemoryResource()]
    for bottom in bottoms:
        assert not isinstance(bottom, mr.UpstreamResourceAdaptor), type(bottom).__name__
    assert issubclass(mr.UpstreamResourceAdaptor, mr.DeviceMemoryResource)
    with pytest.raises(TypeError):
        mr.UpstreamResourceAdaptor()  # only its subclasses are built


def test_sam_headroom_resource_places_system_memory_or_refuses_clearly():
    try:
        sam = mr.SamHeadroomMemoryResource(headroom=1 << 20)
    except ValueError as refused:  # a device without pageable memory access (the H200)
        assert "PageableMemoryAccess = 0" in str(refused)
        return
    assert sam.headroom == 1 << 20
    assert not isinstance(sam, mr.UpstreamResourceAdaptor)
    buf = rmm.DeviceBuffer.to_device(b"headroom", mr=sam)
    assert buf.tobytes() == b"headroom"


def test_cuda_async_managed_resource_serves_host_readable_memory():
    managed = mr.experimental.CudaAsyncManagedMemoryResource()
    assert isinstance(managed.pool_handle(), int) and managed.pool_handle() != 0
    from rmm.mr.experimental import CudaAsyncManagedMemoryResource
    from rmm.pylibrmm.memory_resource.experimental import (
        CudaAsyncManagedMemoryResource as same,
    )

    assert CudaAsyncManagedMemoryResource is same is type(managed)
    mr.set_current_device_resource(managed)
    assert type(mr.get_current_device_resource()) is type(managed)
    data = bytes(range(256)) * 64
    buf = rmm.DeviceBuffer.to_device(data)
    assert buf.tobytes() == data
    # The same pool each time: the device's default managed pool.
    assert mr.experimental.CudaAsyncManagedMemoryResource().pool_handle() == managed.pool_handle()
