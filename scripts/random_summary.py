#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarizes the random stage of gpu-host-run.sh: for each case of the pool's random-allocations
benchmark, the median over processes of each process's median, this tree against the baseline, and
the geometric mean of the ratios."""
import glob
import json
import math
import os
import statistics
import sys

results = sys.argv[1]
medians = {}  # (case, tree) -> per-process medians of ns per operation
for path in sorted(glob.glob(os.path.join(results, "random_*_*.json"))):
    tree = os.path.basename(path).split("_")[1]
    with open(path) as f:
        for row in json.load(f)["benchmarks"]:
            if row.get("aggregate_name") == "median":
                medians.setdefault((row["run_name"], tree), []).append(row["ns_per_op"] * 1e9)  # stored in seconds

print(f"{'case':<56} {'processes':>9} {'new ns':>8} {'base ns':>8} {'new / base':>10}")
ratios = []
for case in sorted({c for c, _ in medians}):
    new, base = medians.get((case, "new")), medians.get((case, "base"))
    line = f"{case:<56} {len(new or []):>9} {statistics.median(new) if new else math.nan:>8.1f}"
    line += f" {statistics.median(base) if base else math.nan:>8.1f}"
    if new and base:
        ratio = statistics.median(new) / statistics.median(base)
        ratios.append(ratio)
        line += f" {ratio:>10.3f}"
    print(line)
if ratios:
    print(f"geometric mean of {len(ratios)} ratios: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
