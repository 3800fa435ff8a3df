# SPDX-License-Identifier: Apache-2.0
"""scripts/placement-reference.py: the reserved bytes of a pool that never moves memory, on logs
small enough to work out by hand, and on a shipped trace against rmm-replay's peak live. Run by
CTest (tests/replay/CMakeLists.txt)."""
import gzip
import importlib.util
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "placement-reference.py"
spec = importlib.util.spec_from_file_location("placement_reference", SCRIPT)
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)


def events(*steps):
    """('a', name, size) and ('f', name) steps as the log's events."""
    return [(s[0], s[1], s[2] if s[0] == "a" else 0) for s in steps]


def both(log):
    """(peak live, first fit's reserved, best fit's reserved)."""
    live, first = reference.replay(log, best_fit=False)
    _, best = reference.replay(log, best_fit=True)
    return live, first, best


class ReferencePool(unittest.TestCase):
    def test_a_hole_too_small_for_the_next_request_stays_reserved(self):
        log = events(("a", "A", 1024), ("a", "B", 256), ("f", "A"), ("a", "C", 2048))
        self.assertEqual(both(log), (2304, 3328, 3328))

    def test_growth_extends_the_free_block_at_the_end(self):
        log = events(("a", "A", 1024), ("a", "B", 512), ("f", "B"), ("a", "C", 1024))
        self.assertEqual(both(log), (2048, 2048, 2048))

    def test_best_fit_keeps_the_large_hole_that_first_fit_splits(self):
        log = events(("a", "X1", 1024), ("a", "S1", 256), ("a", "X2", 512), ("a", "S2", 256), ("f", "X1"),
                     ("f", "X2"), ("a", "R", 512), ("a", "T", 1024))
        self.assertEqual(both(log), (2048, 3072, 2048))

    def test_a_free_merges_with_both_neighbours(self):
        log = events(("a", "A", 256), ("a", "B", 256), ("a", "C", 256), ("a", "D", 256), ("f", "A"), ("f", "C"),
                     ("f", "B"), ("a", "E", 768))
        self.assertEqual(both(log), (1024, 1024, 1024))

    def test_sizes_round_up_to_256_bytes_and_unknown_frees_are_skipped(self):
        log = events(("a", "A", 1), ("f", "before the log"), ("a", "B", 257))
        self.assertEqual(both(log), (768, 768, 768))


class CommandLine(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                              timeout=60)

    def test_a_shipped_trace_has_the_peak_live_that_rmm_replay_reports(self):
        r = self.run_script(ROOT / "tests" / "data" / "traces" / "cupy_mix.csv.gz")
        self.assertEqual(r.returncode, 0, r.stderr)
        name, live, _, first, _, first_ratio, best, _, best_ratio = r.stdout.splitlines()[1].split()
        self.assertEqual(name, "cupy_mix.csv.gz")
        self.assertEqual(live, "194.96")  # rmm-replay's peak live for this log
        self.assertGreaterEqual(float(first), float(live))
        self.assertGreaterEqual(float(best), float(live))
        self.assertAlmostEqual(float(first_ratio), float(first) / float(live), places=3)
        self.assertAlmostEqual(float(best_ratio), float(best) / float(live), places=3)

    def test_a_compressed_log_reads_as_the_plain_one(self):
        rows = "Thread,Time,Action,Pointer,Size,Stream\n1,0,allocate,0x10,1024,0x0\n1,0,free,0x10,1024,0x0\n"
        with tempfile.TemporaryDirectory() as tmp:
            plain, packed = Path(tmp) / "a.csv", Path(tmp) / "a.csv.gz"
            plain.write_text(rows)
            with gzip.open(packed, "wt") as f:
                f.write(rows)
            self.assertEqual(reference.read_log(str(plain)), reference.read_log(str(packed)))
            self.assertEqual(reference.read_log(str(plain)), [("a", "0x10", 1024), ("f", "0x10", 1024)])

    def test_a_bad_row_is_named_by_file_and_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "bad.csv"
            log.write_text("Thread,Time,Action,Pointer,Size,Stream\n1,0,allocate,0x10,1024,0x0\n1,0,move,0x10,1,0x0\n")
            r = self.run_script(log)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(f"{log}:3: unknown action 'move' (allocate or free)", r.stderr)
            log.write_text("Thread,Time,Action,Pointer,Size,Stream\n1,0,allocate,0x10,many,0x0\n")
            r = self.run_script(log)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(f"{log}:2: not a row of an allocation log", r.stderr)

    def test_without_a_log_it_says_how_to_use_it(self):
        r = self.run_script()
        self.assertEqual(r.returncode, 64)
        self.assertIn("usage: placement-reference.py LOG...", r.stdout)


if __name__ == "__main__":
    unittest.main()
