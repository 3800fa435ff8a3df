# SPDX-License-Identifier: Apache-2.0
"""Memory statistics of the current device's resource, and a per-function memory profiler.

enable_statistics() puts a StatisticsResourceAdaptor on top of the current resource; its
counters form a stack, so a block of code (``with statistics():``) or a function
(``@profiler()``) can be measured on its own.
"""

from __future__ import annotations

import inspect
import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps

from rmm import mr


class AllocationCounts(dict):
    """A StatisticsResourceAdaptor's counters: a dict, as RMM's README prints them, whose keys are
    also attributes (``counts.current_bytes``), as RMM's code reads them."""

    def __getattr__(self, name: str) -> int:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"allocation counts have no {name!r}; they have {', '.join(self)}") from None


@dataclass
class Statistics:
    """Bytes and allocations: outstanding now, their peak and their total."""

    current_bytes: int
    current_count: int
    peak_bytes: int
    peak_count: int
    total_bytes: int
    total_count: int


def _current_statistics_mr() -> mr.StatisticsResourceAdaptor | None:
    current = mr.get_current_device_resource()
    return current if isinstance(current, mr.StatisticsResourceAdaptor) else None


def enable_statistics() -> None:
    """Wraps the current device's resource in a StatisticsResourceAdaptor (once)."""
    if _current_statistics_mr() is None:
        mr.set_current_device_resource(mr.StatisticsResourceAdaptor(mr.get_current_device_resource()))


def get_statistics() -> Statistics | None:
    """The counters of the current level, or None when statistics are not enabled."""
    stats_mr = _current_statistics_mr()
    return None if stats_mr is None else Statistics(**stats_mr.allocation_counts)


def push_statistics() -> Statistics | None:
    """Starts a new level of counters; returns the counters of the level below (None when not enabled)."""
    stats_mr = _current_statistics_mr()
    return None if stats_mr is None else Statistics(**stats_mr.push_counters())


def pop_statistics() -> Statistics | None:
    """Ends the top level, folding it into the one below; returns it (None when not enabled)."""
    stats_mr = _current_statistics_mr()
    return None if stats_mr is None else Statistics(**stats_mr.pop_counters())


@contextmanager
def statistics():
    """Measures a block on a level of its own, enabling statistics for the block if needed."""
    prior_mr = None
    if push_statistics() is None:
        prior_mr = mr.get_current_device_resource()
        enable_statistics()
    current_mr = mr.get_current_device_resource()
    try:
        yield
    finally:
        if mr.get_current_device_resource() is not current_mr:
            raise ValueError("the current device resource was changed inside a statistics() block")
        if prior_mr is None:
            pop_statistics()
        else:
            mr.set_current_device_resource(prior_mr)


class ProfilerRecords:
    """Memory used per profiled function or block: calls, total bytes and peak bytes."""

    @dataclass
    class MemoryRecord:
        num_calls: int = 0
        memory_total: int = 0
        memory_peak: int = 0

        def add(self, memory_total: int, memory_peak: int) -> None:
            self.num_calls += 1
            self.memory_total += memory_total
            self.memory_peak = max(self.memory_peak, memory_peak)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, ProfilerRecords.MemoryRecord] = defaultdict(ProfilerRecords.MemoryRecord)

    def add(self, name: str, data: Statistics) -> None:
        with self._lock:
            self._records[name].add(memory_total=data.total_bytes, memory_peak=data.peak_bytes)

    @property
    def records(self) -> dict[str, MemoryRecord]:
        with self._lock:
            return dict(self._records)

    def report(self, ordered_by: str = "memory_peak") -> str:
        """A table of the records, largest first by ``ordered_by`` (a MemoryRecord field)."""
        if ordered_by not in ("num_calls", "memory_total", "memory_peak"):
            raise ValueError(f"ordered_by must be num_calls, memory_total or memory_peak, not {ordered_by!r}")
        rows = sorted(self.records.items(), key=lambda item: getattr(item[1], ordered_by), reverse=True)
        lines = ["Memory Profiling", "=" * 16, "", f"Ordered by: {ordered_by}", ""]
        if not rows:  # as RMM's report says it
            return "\n".join(lines) + "\nNo data, maybe profiling wasn't enabled?\n"
        lines.append(f"{'ncalls':>8} {'memory_peak':>14} {'memory_total':>14}  filename:lineno(function)")
        for name, record in rows:
            lines.append(f"{record.num_calls:>8} {record.memory_peak:>14} {record.memory_total:>14}  {name}")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return self.report()


default_profiler_records = ProfilerRecords()


def _get_descriptive_name_of_object(obj) -> str:
    """The name a profiler records a function under: "file:line(qualified name)", of the function a
    decorator wraps; its qualified name alone when its source cannot be found."""
    unwrapped = inspect.unwrap(obj)
    try:
        file = inspect.getfile(unwrapped)
        _, line = inspect.getsourcelines(unwrapped)
    except (OSError, TypeError):
        return unwrapped.__qualname__
    return f"{file}:{line}({unwrapped.__qualname__})"


class profiler:
    """Records the memory a function (as a decorator) or a block (as a context manager) allocates.

    Does nothing while statistics are not enabled (see enable_statistics).
    """

    def __init__(self, *, records: ProfilerRecords = default_profiler_records, name: str = ""):
        self._records = records
        self._name = name

    def __call__(self, func):
        name = self._name or _get_descriptive_name_of_object(func)

        @wraps(func)
        def measured(*args, **kwargs):
            if push_statistics() is None:
                return func(*args, **kwargs)
            try:
                return func(*args, **kwargs)
            finally:
                stats = pop_statistics()
                if stats is not None:
                    self._records.add(name=name, data=stats)

        return measured

    def __enter__(self):
        if not self._name:
            caller = inspect.stack()[1]
            self._name = f"{caller.filename}:{caller.lineno}"
        self._pushed = push_statistics() is not None
        return self

    def __exit__(self, *exc):
        if self._pushed:
            stats = pop_statistics()
            if stats is not None:
                self._records.add(name=self._name, data=stats)
        return False


__all__ = [
    "AllocationCounts",
    "ProfilerRecords",
    "Statistics",
    "default_profiler_records",
    "enable_statistics",
    "get_statistics",
    "pop_statistics",
    "profiler",
    "push_statistics",
    "statistics",
]
