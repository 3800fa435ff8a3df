# SPDX-License-Identifier: Apache-2.0
"""rmm.statistics: counters on the current resource, nested levels, and the memory profiler."""

import pytest
from conftest import SEED_ALLOCATION_COUNTS

import rmm
from rmm import mr
from rmm.statistics import (
    ProfilerRecords,
    Statistics,
    enable_statistics,
    get_statistics,
    pop_statistics,
    profiler,
    push_statistics,
    statistics,
)


def test_nothing_is_counted_until_enabled():
    assert get_statistics() is None and push_statistics() is None and pop_statistics() is None


def test_enable_statistics_counts_on_the_current_resource(pool):
    enable_statistics()
    enable_statistics()  # once only
    stats_mr = mr.get_current_device_resource()
    assert isinstance(stats_mr, mr.StatisticsResourceAdaptor) and stats_mr.upstream_mr is pool
    a = rmm.DeviceBuffer(size=1000)
    b = rmm.DeviceBuffer(size=24)
    del a
    assert get_statistics() == Statistics(
        current_bytes=24, current_count=1, peak_bytes=1024, peak_count=2, total_bytes=1024, total_count=2
    )
    del b


def test_the_seed_example_of_allocation_counts():
    stats_mr = mr.StatisticsResourceAdaptor(mr.ManagedMemoryResource())
    mr.set_current_device_resource(stats_mr)
    x = rmm.DeviceBuffer(size=16)
    assert stats_mr.allocation_counts == SEED_ALLOCATION_COUNTS
    # RMM's code reads the counters as attributes too.
    assert stats_mr.allocation_counts.current_bytes == SEED_ALLOCATION_COUNTS["current_bytes"]
    with pytest.raises(AttributeError, match="current_bytes"):
        stats_mr.allocation_counts.bytes
    del x


def test_the_context_manager_measures_its_block_alone(pool):
    outside = rmm.DeviceBuffer(size=100)
    with statistics():
        inner = rmm.DeviceBuffer(size=1000)
        with statistics():
            rmm.DeviceBuffer(size=50)
            assert get_statistics().total_bytes == 50
        stats = get_statistics()
        assert stats.total_bytes == 1050 and stats.current_bytes == 1000 and stats.peak_bytes == 1050
        del inner
    assert mr.get_current_device_resource() is pool  # enabled for the block only
    del outside


def test_changing_the_resource_inside_a_block_is_an_error(pool):
    with pytest.raises(ValueError, match="changed"):
        with statistics():
            mr.set_current_device_resource(mr.CudaMemoryResource())


def test_popping_the_base_level_is_an_error():
    enable_statistics()
    with pytest.raises(IndexError, match="cannot pop the last counter pair"):
        pop_statistics()
    with pytest.raises(IndexError, match="cannot pop the last counter pair"):
        mr.get_current_device_resource().pop_counters()


def test_the_profiler_records_functions_and_blocks(pool):
    records = ProfilerRecords()
    assert "No data" in records.report(), "an empty report says so, in RMM's words"

    @profiler(records=records)
    def make(n):
        return rmm.DeviceBuffer(size=n)

    make(10)  # not enabled: runs, records nothing
    assert records.records == {}
    enable_statistics()
    kept = [make(1000), make(3000)]
    with profiler(records=records, name="block"):
        rmm.DeviceBuffer(size=500)
    by_name = records.records
    (function_name,) = [name for name in by_name if name != "block"]
    assert "make" in function_name and "test_statistics.py" in function_name
    assert by_name[function_name] == ProfilerRecords.MemoryRecord(num_calls=2, memory_total=4000, memory_peak=3000)
    assert by_name["block"] == ProfilerRecords.MemoryRecord(num_calls=1, memory_total=500, memory_peak=500)
    report = records.report()
    assert report.index(function_name) < report.index("block")  # ordered by peak, largest first
    with pytest.raises(ValueError, match="ordered_by"):
        records.report(ordered_by="size")
    del kept
