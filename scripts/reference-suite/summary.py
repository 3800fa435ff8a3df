# SPDX-License-Identifier: Apache-2.0
"""Counts the results of RMM's C++ tests run by scripts/run-reference-suite.sh: one Google Test
JSON report per test program in DIR, plus BUILD_LOG to name the programs that did not compile.
Prints the totals and every failure with the first line of its message.
usage: summary.py DIR BUILD_LOG"""
import json
import pathlib
import re
import sys

out, build_log = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
not_built = sorted(set(re.findall(r"FAILED: CMakeFiles/(\w+)\.dir", build_log.read_text(errors="replace"))))
counts = {"passed": 0, "failed": 0, "skipped": 0}
failures = []
programs = sorted(out.glob("*.json"))
for report in programs:
    for suite in json.loads(report.read_text())["testsuites"]:
        for test in suite["testsuite"]:
            if test.get("result") == "SKIPPED":
                counts["skipped"] += 1
            elif test.get("failures"):
                counts["failed"] += 1
                message = test["failures"][0]["failure"].strip().splitlines()
                failures.append(f"{report.stem}: {suite['name']}.{test['name']}: {' / '.join(message[:2])[:240]}")
            else:
                counts["passed"] += 1
crashed = [p.stem for p in sorted(out.glob("*.log")) if not (out / f"{p.stem}.json").exists()]
print(f"programs: {len(programs)} ran, {len(not_built)} did not compile ({', '.join(not_built) or 'none'})"
      f"{f', {len(crashed)} stopped without a report ({chr(44).join(crashed)})' if crashed else ''}")
print(f"tests: {sum(counts.values())}: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
for line in failures:
    print("  " + line)
