# SPDX-License-Identifier: Apache-2.0
"""One run of scripts/run-gpu-apps.sh as a JSON line: the program's RESULT line, or its failure, and
under the shim the report's figures, the number of rows in its allocation log and what a replay of
that log through a pool found.
usage: collect.py PROGRAM WAY STATUS OUTPUT REPORT LOG [REPLAY]"""
import json
import os
import re
import sys

program, way, status, output, report_path, log_path = sys.argv[1:7]
replay_path = sys.argv[7] if len(sys.argv) > 7 else ""
text = open(output, errors="replace").read()
line = {"program": program, "way": way, "status": int(status)}
for row in text.splitlines():
    if row.startswith("RESULT "):
        line.update(json.loads(row[len("RESULT "):]))
churn = re.search(r"([\d.]+) ms per step, checksum (\d+)", text)
if churn:  # alloc_churn prints text, not a RESULT line
    line.update({"step_ms": float(churn.group(1)), "result": churn.group(2)})
skipped = re.search(r"^SKIP [^:]*: (.*)$", text, re.MULTILINE)
if skipped:  # the driver cannot run here (no GPU, a framework missing) and said why
    line["skipped"] = skipped.group(1)
elif "step_ms" not in line:
    line["error"] = text.strip().splitlines()[-1][-300:] if text.strip() else "no output"
under_shim = way.startswith("shim")
if under_shim and os.path.exists(report_path):
    shim = json.load(open(report_path))
    devices = shim.get("devices", [])
    if devices:
        device = devices[0]
        line["shim_allocations"] = device["allocations"]
        line["shim_frees"] = device["frees"]
        line["shim_peak_reserved"] = device["peak_reserved_bytes"]
        line["shim_peak_live"] = device["peak_live_bytes"]
        line["shim_failures"] = device["failures"]
    line["shim_passed_through"] = shim.get("passed_through", {})
    # The program's own cuMemCreate / cuMemRelease and their time: what a cache of them could save.
    line["shim_physical_allocations"] = shim.get("physical_allocations", {})
    if devices:
        line["shim_ns_per_call"] = devices[0].get("ns_per_call")
if under_shim:
    logs = [p for p in [log_path.replace("%d", "0"), log_path] if os.path.exists(p)]
    if logs:
        rows = open(logs[0]).read().splitlines()[1:]
        line["log_allocations"] = sum(1 for r in rows if ",allocate," in r)
        line["log_frees"] = sum(1 for r in rows if ",free," in r)
if under_shim and replay_path and os.path.exists(replay_path):
    results = json.load(open(replay_path)).get("results", [])
    if results:
        replayed = results[0]
        line["replay_status"] = replayed["status"]
        line["replay_peak_live"] = replayed.get("peak_live_bytes")
        line["replay_peak_reserved"] = replayed.get("peak_reserved_bytes")
print(json.dumps(line))
