# SPDX-License-Identifier: Apache-2.0
"""The real-program drivers (bench/apps) and the table of scripts/run-gpu-apps.sh, without a GPU: a
driver that cannot run says why and exits with the skip status, and collect.py and table.py turn
runs into the table, marking what does not add up. Run by CTest (tests/apps/CMakeLists.txt), whose
environment provides a device (the emulator's, or the GPU)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

APPS = Path(__file__).resolve().parents[2] / "bench" / "apps"
DRIVERS = ["torch_resnet50", "torch_gpt2", "torch_vit", "cupy_mix", "jax_mlp", "jax_transformer",
           "jax_torch_exchange", "numba_arrays"]
SKIPPED = 77
MiB = 2**20


def python(*args, env=None):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, env=env, timeout=60)


class DriversSkip(unittest.TestCase):
    def test_without_a_device_each_driver_skips_saying_why(self):
        no_device = dict(os.environ, CUDA_VISIBLE_DEVICES="", RMM_EMU_DEVICE_COUNT="0")
        for name in DRIVERS:
            with self.subTest(driver=name):
                r = python(APPS / f"{name}.py", "own", env=no_device)
                self.assertEqual(r.returncode, SKIPPED, r.stdout + r.stderr)
                self.assertRegex(r.stdout, rf"^SKIP {name}: no CUDA (driver|device)")

    def test_a_missing_framework_is_named(self):
        env = dict(os.environ, PYTHONPATH=str(APPS))
        r = python("-c", "import harness; harness.require('probe', 'json', 'no_such_framework_here')", env=env)
        self.assertEqual(r.returncode, SKIPPED, r.stdout + r.stderr)
        self.assertEqual(r.stdout.strip(), "SKIP probe: no_such_framework_here not installed")

    def test_with_a_device_and_its_modules_a_driver_goes_on(self):
        env = dict(os.environ, PYTHONPATH=str(APPS))
        r = python("-c", "import harness; harness.require('probe', 'json'); print('ran')", env=env)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "ran"), r.stderr)


class Table(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = Path(self.dir.name)
        self.runs = self.path / "runs.jsonl"

    def tearDown(self):
        self.dir.cleanup()

    def collect(self, program, way, status, output, report=None, log=None, replay=None):
        files = {}
        for name, content in (("out", output), ("report.json", report), ("log.csv", log), ("replay.json", replay)):
            files[name] = self.path / f"{program}-{way}.{name}"
            if content is not None:
                files[name].write_text(content if isinstance(content, str) else json.dumps(content))
        r = python(APPS / "collect.py", program, way, status, *files.values())
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.runs, "a") as runs:
            runs.write(r.stdout)

    def table(self):
        r = python(APPS / "table.py", self.runs)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    @staticmethod
    def result(step_ms, **extra):
        return "RESULT " + json.dumps({"program": "prog", "step_ms": step_ms, "result": "1.5", **extra}) + "\n"

    def test_the_shim_row_its_ratios_and_what_does_not_add_up(self):
        self.collect("prog", "own", 0, self.result(10.0, framework_peak_reserved=100 * MiB))
        report = {"devices": [{"allocations": 3, "frees": 3, "peak_reserved_bytes": 90 * MiB,
                               "peak_live_bytes": 80 * MiB, "failures": 0}],
                  "passed_through": {"null_or_empty": 5, "foreign_pointer": 1, "virtual_memory": 0}}
        log = "Thread,Time,Action,Pointer,Size,Stream\n" + "".join(
            f"1,00:00:00.{i:06d},{action},0x{i:x}00,256,0x0\n"
            for i, action in enumerate(["allocate", "allocate", "free", "allocate", "free"]))
        replay = {"results": [{"status": "ok", "peak_live_bytes": 80 * MiB + 1, "peak_reserved_bytes": 96 * MiB}]}
        self.collect("prog", "shim", 0, self.result(9.0), report, log, replay)
        table = self.table()
        self.assertIn("| prog | shim | 9.00 | 1.5 | - / - / 90 | 3 (3) / 80 |", table)
        self.assertIn("| prog (shim) | 0.90 | 0.90 |", table)  # step time and peak memory against its own allocator
        # Three allocations and three frees counted, but the log holds two frees; one foreign free
        # passed through; the replay's peak live is a byte above the report's.
        self.assertIn("| prog (shim) | 3 = 3 / **3 != 2** | foreign pointer 1 | **83,886,080 B / 83,886,081 B** | 96 |",
                      table)

    def test_no_memory_ratio_where_allocations_passed_the_shim_by(self):
        self.collect("prog", "own", 0, self.result(2.0, framework_peak_reserved=600 * MiB))
        report = {"devices": [{"allocations": 7, "frees": 0, "peak_reserved_bytes": 66 * MiB,
                               "peak_live_bytes": 64 * MiB, "failures": 0}],
                  "passed_through": {"null_or_empty": 0, "virtual_memory": 944}}
        self.collect("prog", "shim", 0, self.result(3.0), report)
        table = self.table()
        self.assertIn("| prog (shim) | 1.50 | - (944 allocations not served) |", table)
        self.assertIn("| prog (shim) | **7, no log** / **0, no log** | virtual memory 944 | 64 / - | - |", table)

    def test_every_way_under_the_shim_gets_its_figures_and_ratios(self):
        self.collect("prog", "own", 0, self.result(2.0, framework_peak_reserved=600 * MiB))
        self.collect("prog", "own_growing", 0, self.result(2.0, framework_peak_reserved=500 * MiB))
        report = {"devices": [{"allocations": 9, "frees": 9, "peak_reserved_bytes": 450 * MiB,
                               "peak_live_bytes": 440 * MiB, "failures": 0}],
                  "passed_through": {"null_or_empty": 0, "program_pool": 0}}
        self.collect("prog", "shim", 0, self.result(2.1), report)
        self.collect("prog", "shim_platform", 0, self.result(3.0), dict(report, passed_through={"virtual_memory": 5}))
        table = self.table()
        self.assertIn("| prog (shim) | 1.05 | 0.90 |", table)  # memory against the growing allocator
        self.assertIn("| prog (shim_platform) | 1.50 | - (5 allocations not served) |", table)
        self.assertIn("| prog | shim_platform | 3.00 | 1.5 | - / - / 450 | 9 (?) / 440 |", table)

    def test_footprints_side_by_side_and_their_ratio(self):
        for sampled in (300, 240, 250):
            self.collect("prog", "own", 0, self.result(2.0, framework_peak_reserved=260 * MiB,
                                                       sampled_peak=sampled * MiB))
        report = {"devices": [{"allocations": 9, "frees": 9, "peak_reserved_bytes": 234 * MiB,
                               "peak_live_bytes": 200 * MiB, "failures": 0}],
                  "passed_through": {"null_or_empty": 0}}
        for sampled in (270, 280):
            self.collect("prog", "shim", 0, self.result(2.0, sampled_peak=sampled * MiB), report)
        self.collect("prog", "shim_platform", 0, self.result(2.0, sampled_peak=500 * MiB),
                     dict(report, passed_through={"virtual_memory": 5}))
        table = self.table()
        # The medians: own 250 MiB sampled, the shim 275; NVML sees what passed the shim by too.
        self.assertIn("| prog (shim) | 1.00 | 0.90 | 260 / 250 / 275 | 1.10 |", table)
        self.assertIn("| prog (shim_platform) | 1.00 | - (5 allocations not served) | 260 / 250 / 500 | 2.00 |", table)

    def test_processes_of_one_way_show_their_median_and_list(self):
        for step in (0.7, 0.4, 0.5):
            self.collect("prog", "own", 0, self.result(step))
        self.assertIn("| prog | own | 0.50 (0.70, 0.40, 0.50) | 1.5 |", self.table())

    def test_skipped_and_failed_runs_say_why(self):
        self.collect("prog", "own", SKIPPED, "SKIP prog: cupy not installed\n")
        self.collect("prog", "shim", 1, "Traceback (most recent call last):\nRuntimeError: out of memory\n")
        table = self.table()
        self.assertIn("| prog | own | skipped | cupy not installed | | |", table)
        self.assertIn("| prog | shim | failed (1) | RuntimeError: out of memory | | |", table)


if __name__ == "__main__":
    unittest.main()


class RlTable(unittest.TestCase):
    """rl_turns.py's table: the three ways side by side, and losses compared with the unpaused run."""

    OPS = ("pause_kv_cache", "pause_rollout", "resume_train", "to_train", "pause_train", "resume_rollout",
           "resume_kv_cache", "to_rollout", "turn")

    def result(self, way, seconds, losses):
        r = {"program": "rl_turns", "way": way, "device": "GPU", "turns": 2, "memory_source": "NVML",
             "free_gib_at_start": 78.0, "rollout_gib": 3.75, "kv_cache_gib": 23.25, "train_gib": 6.75,
             "used_gib_before": 0.5, "peak_used_gib_rollout_phase": 28.0, "peak_used_gib_train_phase": 10.0,
             "losses": losses}
        for op in self.OPS:
            r[f"{op}_s"], r[f"{op}_first_s"] = seconds, 2 * seconds
        return "RESULT " + json.dumps(r)

    def table(self, *lines):
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write("\n".join(lines) + "\n")
            f.flush()
            return python(APPS / "rl_turns.py", "table", f.name)

    def test_equal_losses_give_the_table_and_the_shims_ratio_to_torch_memory_saver(self):
        r = self.table(self.result("none", 0.0, [0.5, 0.25]), self.result("shim", 0.1, [0.5, 0.25]),
                       self.result("tms", 0.4, [0.5, 0.25]))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("| | shim | tms | none | shim / tms |", r.stdout)
        self.assertIn("| whole turn | 0.100 (0.200) | 0.400 (0.800) | 0.000 (0.000) | 0.25 |", r.stdout)
        self.assertIn("losses equal to the run that never paused: shim yes, tms yes, none yes", r.stdout)

    def test_a_loss_that_differs_fails_the_table(self):
        r = self.table(self.result("none", 0.0, [0.5, 0.25]), self.result("shim", 0.1, [0.5, 0.26]))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("shim NO", r.stdout)

    def test_without_the_unpaused_run_there_is_nothing_to_compare_with(self):
        r = self.table(self.result("shim", 0.1, [0.5]))
        self.assertEqual(r.returncode, 1)
        self.assertIn("no run that never paused", r.stdout)
