#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarizes a stage of gpu-host-run.sh that runs one benchmark in rounds, this tree ("new")
against the baseline ("base"): files PREFIX_TREE_ROUND.json under RESULTS.

For each case it prints the median over processes of each process's median, and the least of those
medians. Host noise (placement, another tenant, a slower clock) only ever adds time, so a gap that
shows in the least as well as in the median is the code's, and one that shows only in the median
is the host's.

usage: rounds_summary.py RESULTS PREFIX"""
import glob
import json
import math
import os
import statistics
import sys

results, prefix = sys.argv[1], sys.argv[2]
medians = {}  # (case, tree) -> per-process medians, ns
for path in sorted(glob.glob(os.path.join(results, f"{prefix}_*_*.json"))):
    tree = os.path.basename(path)[len(prefix) + 1 :].split("_")[0]
    with open(path) as f:
        for row in json.load(f)["benchmarks"]:
            if row.get("aggregate_name") != "median":
                continue
            # The random-allocations benchmark reports a rate in seconds per operation; the
            # others report their time per iteration.
            ns = row["ns_per_op"] * 1e9 if "ns_per_op" in row else row["real_time"]
            medians.setdefault((row["run_name"], tree), []).append(ns)


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


print(f"{'case':<52} {'procs':>5} {'new med':>8} {'base med':>8} {'ratio':>6} {'new min':>8} {'base min':>8} {'ratio':>6}")
by_median, by_least = [], []
for case in sorted({c for c, _ in medians}):
    new, base = medians.get((case, "new"), []), medians.get((case, "base"), [])
    if not new or not base:
        print(f"{case:<52} {len(new):>5} (no {'baseline' if new else 'new'} result)")
        continue
    med = statistics.median(new) / statistics.median(base)
    least = min(new) / min(base)
    by_median.append(med)
    by_least.append(least)
    print(f"{case:<52} {len(new):>5} {statistics.median(new):>8.1f} {statistics.median(base):>8.1f} {med:>6.3f}"
          f" {min(new):>8.1f} {min(base):>8.1f} {least:>6.3f}")
if by_median:
    print(f"geometric mean of {len(by_median)} ratios: medians {geomean(by_median):.3f}, least {geomean(by_least):.3f}")
