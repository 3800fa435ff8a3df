#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarizes the passthrough stage of gpu-host-run.sh: for each call and way, the minimum and the
median over processes of each process's median, and the shim's difference to native; then, per
process, a foreign free through the program's cuMemFree against the driver's own function."""
import glob
import json
import os
import statistics
import sys

results = sys.argv[1]
medians = {}  # (benchmark, way) -> per-process medians in ns
for path in sorted(glob.glob(os.path.join(results, "passthrough_*_*.json"))):
    way = os.path.basename(path).split("_")[1]
    with open(path) as f:
        for row in json.load(f)["benchmarks"]:
            if row.get("aggregate_name") == "median":
                medians.setdefault((row["run_name"], way), []).append(row["real_time"])

print(f"{'call':<14} {'way':<7} {'processes':>9} {'min ns':>8} {'median ns':>10} {'vs native (min / median)':>26}")
for call in sorted({c for c, _ in medians}):
    native = medians.get((call, "native"))
    for way in ("native", "served", "off"):
        times = medians.get((call, way))
        if not times:
            continue
        line = f"{call:<14} {way:<7} {len(times):>9} {min(times):>8.1f} {statistics.median(times):>10.1f}"
        if native and way != "native":
            line += f" {min(times) - min(native):>+12.1f} / {statistics.median(times) - statistics.median(native):>+.1f}"
        print(line)

paired = sorted(glob.glob(os.path.join(results, "paired_*.json")))
if paired:
    print()
    print(f"{'one process':<12} {'cuMemFree ns':>13} {'driver own ns':>14} {'difference':>11}")
for path in paired:
    with open(path) as f:
        rows = {row["run_name"]: row["real_time"] for row in json.load(f)["benchmarks"]
                if row.get("aggregate_name") == "median"}
    way = os.path.basename(path)[len("paired_"):-len(".json")]
    if "unknown_free" in rows and "unknown_free_driver_own" in rows:
        mine, own = rows["unknown_free"], rows["unknown_free_driver_own"]
        print(f"{way:<12} {mine:>13.1f} {own:>14.1f} {mine - own:>+11.1f}")
