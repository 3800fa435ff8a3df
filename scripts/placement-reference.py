#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a pool that never moves memory would reserve for an allocation log: a reference for the
peak reserved that rmm-replay and the shim's report give.

The reference pool reuses every free at once (streams ignored), rounds blocks up to 256 bytes,
merges free neighbours, and grows by exactly what it lacks at the end of its range: no growth
steps, no 2 MiB granules. It places each block by first fit (the lowest address that fits) and by
best fit (the smallest free block that fits, then the lowest address). A stack that reserves about
as much as the better of the two loses nothing to placement that a pool keeping its blocks where
they are could win back; below it, only moving memory helps (growth = "remapping").

usage: placement-reference.py LOG...   (the logging adaptor's CSV, plain or .gz)
"""

import bisect
import csv
import gzip
import sys

ALIGNMENT = 256


def read_log(path):
    """The log's events in order: ('a' or 'f', pointer, size)."""
    opener = gzip.open if path.endswith(".gz") else open
    events = []
    with opener(path, "rt", newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            try:
                action, pointer, size = row["Action"], row["Pointer"], int(row["Size"])
            except (KeyError, TypeError, ValueError):
                raise SystemExit(f"{path}:{line}: not a row of an allocation log (Action, Pointer, Size)")
            if action not in ("allocate", "free"):
                raise SystemExit(f"{path}:{line}: unknown action '{action}' (allocate or free)")
            events.append((action[0], pointer, size))
    return events


class ReferencePool:
    """Free blocks by address (for merging and first fit) and by size (for best fit)."""

    def __init__(self, best_fit):
        self.best_fit = best_fit
        self.by_start = []  # sorted (start, size)
        self.by_size = []  # sorted (size, start)
        self.end = 0  # the range's end: everything below it is reserved

    def _remove(self, start, size):
        del self.by_start[bisect.bisect_left(self.by_start, (start, size))]
        del self.by_size[bisect.bisect_left(self.by_size, (size, start))]

    def _insert(self, start, size):
        bisect.insort(self.by_start, (start, size))
        bisect.insort(self.by_size, (size, start))

    def _fit(self, size):
        if self.best_fit:
            i = bisect.bisect_left(self.by_size, (size, -1))
            return None if i == len(self.by_size) else self.by_size[i][::-1]
        return next((block for block in self.by_start if block[1] >= size), None)

    def allocate(self, size):
        block = self._fit(size)
        if block is None:  # grow: the free block at the end, if any, plus what it lacks
            last = self.by_start[-1] if self.by_start else None
            if last is not None and last[0] + last[1] == self.end:
                self._remove(*last)
                self.end += size - last[1]
                return last[0]
            self.end += size
            return self.end - size
        self._remove(*block)
        if block[1] > size:
            self._insert(block[0] + size, block[1] - size)
        return block[0]

    def free(self, start, size):
        i = bisect.bisect_left(self.by_start, (start, 0))
        if i < len(self.by_start) and self.by_start[i][0] == start + size:
            size += self.by_start[i][1]
            self._remove(*self.by_start[i])
        if i > 0 and sum(self.by_start[i - 1]) == start:
            start, before = self.by_start[i - 1]
            size += before
            self._remove(start, before)
        self._insert(start, size)


def replay(events, best_fit):
    """(peak live bytes, peak reserved bytes) of the reference pool over the log."""
    pool = ReferencePool(best_fit)
    blocks = {}
    live = peak_live = 0
    for action, pointer, size in events:
        if action == "a":
            size = -(-size // ALIGNMENT) * ALIGNMENT
            blocks[pointer] = (pool.allocate(size), size)
            live += size
            peak_live = max(peak_live, live)
        elif pointer in blocks:  # a free of something allocated before the log began is skipped
            start, size = blocks.pop(pointer)
            pool.free(start, size)
            live -= size
    return peak_live, pool.end


def main(paths):
    if not paths or any(p in ("-h", "--help") for p in paths):
        print(__doc__.strip())
        return 0 if paths else 64
    mib = 1 << 20
    print(f"{'log':24} {'peak live':>12} {'first fit':>12} {'ratio':>7} {'best fit':>12} {'ratio':>7}")
    for path in paths:
        events = read_log(path)
        live, first = replay(events, best_fit=False)
        _, best = replay(events, best_fit=True)
        ratios = [reserved / live if live else 0.0 for reserved in (first, best)]
        print(f"{path.rsplit('/', 1)[-1]:24} {live / mib:8.2f} MiB {first / mib:8.2f} MiB {ratios[0]:7.4f} "
              f"{best / mib:8.2f} MiB {ratios[1]:7.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
