#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Markdown tables from the sub-allocator benchmarks' JSON (scripts/run-gpu-benchmarks.sh).

usage: benchmark-table.py RESULTS_DIR
"""
import json
import re
import sys
from collections import defaultdict
from pathlib import Path


def load(path):
    with open(path) as f:
        return json.load(f)["benchmarks"]


def random_allocations(results):
    # name: random_allocations/<resource>/<N>/<max MiB>/real_time_median
    rows = defaultdict(dict)
    for b in results:
        m = re.match(r"random_allocations/(\w+)/(\d+)/(\d+)/real_time_median$", b["name"])
        if not m:
            continue
        resource, n, max_mib = m.group(1), int(m.group(2)), int(m.group(3))
        ops = b.get("items_per_second", 0.0)
        rows[(n, max_mib)][resource] = (b["real_time"], 1e9 / ops if ops else float("nan"))
    order = ["pool", "binning", "arena", "cuda_async", "cuda"]
    print("| N / max | " + " | ".join(order) + " | cuda_async / pool | pool ns/op | binning ns/op |")
    print("| --- | " + " | ".join("---" for _ in order) + " | --- | --- | --- |")
    for (n, max_mib) in sorted(rows):
        r = rows[(n, max_mib)]
        cells = [f"{r[k][0]:.3g}" if k in r else "-" for k in order]
        ratio = f"{r['cuda_async'][0] / r['pool'][0]:.0f}x" if "pool" in r and "cuda_async" in r else "-"
        pool_ns = f"{r['pool'][1]:.0f}" if "pool" in r else "-"
        bin_ns = f"{r['binning'][1]:.0f}" if "binning" in r else "-"
        print(f"| {n:,} / {max_mib} MiB | " + " | ".join(cells) + f" | {ratio} | {pool_ns} | {bin_ns} |")
    print("\n(ms per run, median of 3 repetitions; ns/op over allocations and frees)\n")


def sweep(results, pattern, column, cell, footnote):
    """One row per resource, one column per sweep value, and last / first."""
    table = defaultdict(dict)
    for b in results:
        m = re.match(pattern, b["name"])
        if m:
            table[m.group(1)][int(m.group(2))] = b
    points = sorted({p for r in table.values() for p in r})
    print("| resource | " + " | ".join(column(p) for p in points) + f" | {column(points[-1])} / {column(points[0])} |")
    print("| --- | " + " | ".join("---" for _ in points) + " | --- |")
    for resource, r in sorted(table.items()):
        values = {p: cell.value(b) for p, b in r.items()}
        ratio = f"{values[points[-1]] / values[points[0]]:.2f}x" if points[0] in values and points[-1] in values else "-"
        print(f"| {resource} | " + " | ".join(cell.show(values[p]) if p in values else "-" for p in points) + f" | {ratio} |")
    print(f"\n({footnote})\n")


class Nanoseconds:
    value = staticmethod(lambda b: b["real_time"])
    show = staticmethod(lambda v: f"{v:.0f} ns")


class Throughput:
    value = staticmethod(lambda b: b["items_per_second"])
    show = staticmethod(lambda v: f"{v / 1e6:.2f} M/s")


def holes(results):
    sweep(results, r"holes/(\w+)/(\d+)$", lambda h: f"{h:,} holes", Nanoseconds,
          "ns per allocate + deallocate pair of a block larger than every hole")


def threads(results):
    sweep(results, r"threads/(\w+)/real_time/threads:(\d+)$", lambda t: f"{t} thr", Throughput,
          "allocations + frees per second, all threads together, each thread on its own stream")


def adaptor_overhead(results):
    # name: adaptor_overhead/<adaptor>/real_time_median or .../threads:8/real_time/threads:8_median
    one, eight = {}, {}
    for b in results:
        m = re.match(r"adaptor_overhead/(\w+)/(threads:8/)?real_time(/threads:8)?_median$", b["name"])
        if m:
            (eight if m.group(2) else one)[m.group(1)] = b["real_time"]
    if "pool" not in one:
        return
    print("| adaptor over the pool | ns / iteration, 1 thread | added ns / event | ns / iteration, 8 threads | added ns / event |")
    print("| --- | --- | --- | --- | --- |")
    for name in one:
        row = [f"{one[name]:.0f}", f"{(one[name] - one['pool']) / 2:+.0f}" if name != "pool" else "-"]
        if name in eight:
            row += [f"{eight[name]:.1f}", f"{(eight[name] - eight['pool']) / 2:+.1f}" if name != "pool" else "-"]
        print(f"| {name} | " + " | ".join(row) + " |")
    print("\n(median of 3; an iteration is one free and one allocation; 8 threads: wall time per iteration of all threads together)\n")


def counters_table(results, prefix, counters):
    rows = [b for b in results if b["name"].startswith(prefix) and b.get("run_type") != "aggregate"]
    if not rows:
        return
    print("| benchmark | time (us) | " + " | ".join(counters) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in counters) + " |")
    for b in rows:
        cells = [f"{b[c]:.3g}" if c in b else "-" for c in counters]
        print(f"| {b['name']} | {b['real_time']:.1f} | " + " | ".join(cells) + " |")
    print()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = Path(sys.argv[1])
    random_allocations(load(d / "random_allocations.json"))
    hat = load(d / "holes_and_threads.json")
    holes(hat)
    threads(hat)
    if (d / "adaptor_overhead.json").exists():
        adaptor_overhead(load(d / "adaptor_overhead.json"))
    if (d / "uvector_construction.json").exists():
        counters_table(load(d / "uvector_construction.json"), "", ["speedup_vs_device_vector"])
    if (d / "multi_stream_allocations.json").exists():
        counters_table(load(d / "multi_stream_allocations.json"), "", ["speedup_vs_1_stream", "one_stream_us"])


if __name__ == "__main__":
    main()
