"""The table of scripts/run-gpu-apps.sh (markdown), from its runs.jsonl.
usage: table.py RUNS"""
import json
import sys

runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]


def mib(n):
    return f"{n / 2**20:,.0f}" if n else "-"


print("| program | way | step ms (median) | result | peak memory MiB: framework / sampled / shim reserved | "
      "shim: served (log) / peak live MiB |")
print("| --- | --- | --- | --- | --- | --- |")
for r in runs:
    if "step_ms" not in r:
        print(f"| {r['program']} | {r['way']} | failed ({r['status']}) | {r.get('error', '')} | | |")
        continue
    memory = f"{mib(r.get('framework_peak_reserved'))} / {mib(r.get('sampled_peak'))} / {mib(r.get('shim_peak_reserved'))}"
    shim = "-"
    if r["way"] == "shim":
        shim = f"{r.get('shim_allocations', '?')} ({r.get('log_allocations', '?')}) / {mib(r.get('shim_peak_live'))}"
    print(f"| {r['program']} | {r['way']} | {r['step_ms']:.2f} | {r.get('result', '')} | {memory} | {shim} |")
