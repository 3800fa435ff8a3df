# SPDX-License-Identifier: Apache-2.0
"""The table of scripts/run-gpu-apps.sh (markdown), from its runs.jsonl, and each program's ratios to
its own allocator. A program run in several processes per way (where one process says little)
shows the median of their step times, the list beside it, and the ratios compare the medians of
step time, peak memory and footprint; the rest of a row comes from the way's last run.
usage: table.py RUNS"""
import json
import statistics
import sys

runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
ways = {}  # (program, way) -> its runs, in the order first seen
for r in runs:
    ways.setdefault((r["program"], r["way"]), []).append(r)


def mib(n):
    return f"{n / 2**20:,.0f}" if n else "-"


def step_ms(group):
    """The median step time of the runs that finished, or None."""
    steps = [r["step_ms"] for r in group if "step_ms" in r]
    return statistics.median(steps) if steps else None


def peak(group):
    """What a way held at its peak, the median over its runs: the shim's reserved bytes, else the
    framework's own figure; None where no run has one."""
    peaks = [r.get("shim_peak_reserved") or r.get("framework_peak_reserved") for r in group]
    peaks = [p for p in peaks if p]
    return statistics.median(peaks) if peaks else None


def median(group, key):
    """The median of one figure over a way's runs that have it, or None."""
    values = [r[key] for r in group if r.get(key)]
    return statistics.median(values) if values else None


print("| program | way | step ms (median) | result | peak memory MiB: framework / sampled / shim reserved | "
      "shim: served (log) / peak live MiB |")
print("| --- | --- | --- | --- | --- | --- |")
for (program, way), group in ways.items():
    last = group[-1]
    skipped = [r for r in group if "skipped" in r]
    if skipped:
        print(f"| {program} | {way} | skipped | {skipped[-1]['skipped']} | | |")
        continue
    failed = [r for r in group if "step_ms" not in r]
    if failed:
        r = failed[-1]
        print(f"| {program} | {way} | failed ({r['status']}) | {r.get('error', '')} | | |")
        continue
    step = f"{step_ms(group):.2f}"
    if len(group) > 1:
        step += " (" + ", ".join(f"{r['step_ms']:.2f}" for r in group) + ")"
    results = list(dict.fromkeys(str(r.get("result", "")) for r in group))
    memory = " / ".join(mib(last.get(k)) for k in ("framework_peak_reserved", "sampled_peak", "shim_peak_reserved"))
    shim = "-"
    if way.startswith("shim"):
        shim = f"{last.get('shim_allocations', '?')} ({last.get('log_allocations', '?')}) / {mib(last.get('shim_peak_live'))}"
    print(f"| {program} | {way} | {step} | {', '.join(results)} | {memory} | {shim} |")

# The targets: the shim's step time against the framework's own allocator as shipped, and its peak
# memory against the framework's own allocator growing on demand where there is such a way (JAX).
# Beside them the footprints measured alike both ways, through NVML, with the framework's own peak
# reserved: NVML sees the device whole, so its ratio stands where allocations passed the shim by.
print()
print("| program | shim / own: step time | shim / own: peak memory | "
      "footprint MiB: own framework reserved / own NVML / shim NVML | shim NVML footprint / own NVML footprint |")
print("| --- | --- | --- | --- | --- |")
for (program, way), group in ways.items():
    own = ways.get((program, "own"))
    if not way.startswith("shim") or step_ms(group) is None or not own or step_ms(own) is None:
        continue
    reference = ways.get((program, "own_growing"), own)
    own_memory = peak(reference)
    memory = f"{peak(group) / own_memory:.2f}" if peak(group) and own_memory else "-"
    own_nvml, shim_nvml = median(reference, "sampled_peak"), median(group, "sampled_peak")
    footprints = " / ".join(mib(n) for n in (median(reference, "framework_peak_reserved"), own_nvml, shim_nvml))
    nvml = f"{shim_nvml / own_nvml:.2f}" if shim_nvml and own_nvml else "-"
    # Memory the program mapped itself or took from a pool of its own never reaches the shim's stack.
    passed = group[-1].get("shim_passed_through", {})
    unserved = sum(passed.get(k, 0) for k in ("virtual_memory", "program_pool", "managed"))
    if unserved:
        memory = f"- ({unserved} allocations not served)"
    print(f"| {program} ({way}) | {step_ms(group) / step_ms(own):.2f} | {memory} | {footprints} | {nvml} |")

# Nothing lost: every allocation and free the shim served is a row of its log, what passed it by is
# counted by reason (a foreign pointer: a free of memory it did not hand out), and the log replayed
# through a pool finds the peak live bytes the report counted.
def same(counted, logged):
    if logged is None:
        return f"**{counted}, no log**"
    return f"{counted} = {logged}" if counted == logged else f"**{counted} != {logged}**"


def replayed_peaks(run):
    """Peak live bytes, report / replay (in bytes where they differ: MiB could round them alike), and
    the replay's peak reserved bytes."""
    reported, replayed = run.get("shim_peak_live"), run.get("replay_peak_live")
    if replayed is None:
        return f"{mib(reported)} / -", "-"
    live = f"{mib(reported)} / {mib(replayed)}" if replayed == reported else f"**{reported:,} B / {replayed:,} B**"
    return live, mib(run.get("replay_peak_reserved")) if run.get("replay_status") == "ok" else run.get("replay_status")


print()
print("| program | served = log rows: allocations / frees | passed through (null or empty calls aside) | "
      "peak live MiB: report / replay | replay through a pool: peak reserved MiB |")
print("| --- | --- | --- | --- | --- |")
for (program, way), group in ways.items():
    last = group[-1]
    if not way.startswith("shim") or "shim_allocations" not in last:
        continue
    counts = f"{same(last['shim_allocations'], last.get('log_allocations'))} / " \
             f"{same(last['shim_frees'], last.get('log_frees'))}"
    passed = {k: v for k, v in last.get("shim_passed_through", {}).items() if v and k != "null_or_empty"}
    passed_text = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in passed.items()) or "none"
    live, reserved = replayed_peaks(last)
    print(f"| {program} ({way}) | {counts} | {passed_text} | {live} | {reserved} |")
