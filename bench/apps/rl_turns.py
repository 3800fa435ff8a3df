# SPDX-License-Identifier: Apache-2.0
"""An RL loop's turn-taking on one GPU: a rollout engine's weights (kept) and KV cache (dropped) are
paused by tag while a trainer uses their memory, then resumed, turn after turn.

usage:
  rl_turns.py shim [TURNS]   under rmm-run with PYTORCH_NO_CUDA_MEMORY_CACHING=1: the engine's
                             memory tagged with rmm.shim.region, paused with rmm.shim.pause(tag)
  rl_turns.py tms [TURNS]    the same through torch_memory_saver (its regions, its pause), in
                             process with its PyTorch allocator hook, the weights backed up in host
                             memory

Sizes follow the device's free memory F at the start: weights 0.15 F, KV cache 0.30 F, and the
trainer's step 0.65 F, which fits only while the engine's memory is given back. Each turn checks
the weights bit for bit after the resume and the trainer's sum. Prints one `RESULT {...}` line:
the median pause and resume of each tag and of a whole turn, in seconds; exits 1 when a check
fails."""
import json
import statistics
import sys
import time

import torch

GIB = 1 << 30
CHUNK = 1 << 28  # tensors of 256 MiB, as a model's layers and a cache's blocks would be


def tensors(total_bytes, fill):
    count = max(1, total_bytes // CHUNK)
    return [torch.full((CHUNK // 4,), float(fill + i), dtype=torch.float32, device="cuda") for i in range(count)]


def checksum(ts):
    return [float(t.double().sum()) for t in ts]


def fail(message):
    print(f"FAILED: {message}", flush=True)
    sys.exit(1)


class ShimWay:
    """rmm.shim's regions and pauses (the process runs under rmm-run)."""

    def __init__(self):
        import rmm.shim

        if not rmm.shim.available():
            fail("not under the shim: run under rmm-run with PYTORCH_NO_CUDA_MEMORY_CACHING=1")
        self.shim = rmm.shim

    def region(self, tag, keep):
        return self.shim.region(tag, keep=keep)

    def pause(self, tag):
        self.shim.pause(tag)

    def resume(self, tag):
        self.shim.resume(tag)

    def after_trainer(self):
        pass  # the trainer's frees went back to the shim's pool, which a resume takes back from


class TmsWay:
    """torch_memory_saver in process (its PyTorch allocator hook)."""

    def __init__(self):
        from torch_memory_saver import torch_memory_saver

        torch_memory_saver.hook_mode = "torch"
        self.tms = torch_memory_saver

    def region(self, tag, keep):
        return self.tms.region(tag=tag, enable_cpu_backup=keep)

    def pause(self, tag):
        self.tms.pause(tag)

    def resume(self, tag):
        self.tms.resume(tag)

    def after_trainer(self):
        torch.cuda.empty_cache()  # PyTorch's cache holds the trainer's memory otherwise


def main():
    way_name = sys.argv[1] if len(sys.argv) > 1 else "shim"
    turns = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    way = {"shim": ShimWay, "tms": TmsWay}[way_name]()
    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info()
    weights_bytes, kv_bytes, trainer_bytes = int(0.15 * free0), int(0.30 * free0), int(0.65 * free0)
    with way.region("weights", keep=True):
        weights = tensors(weights_bytes, 1)
    with way.region("kv_cache", keep=False):
        kv = tensors(kv_bytes, 100)
    torch.cuda.synchronize()
    expected = checksum(weights)
    times = {"pause_weights": [], "pause_kv_cache": [], "resume_weights": [], "resume_kv_cache": [], "turn": []}
    free_while_paused = []
    for turn in range(turns):
        start = time.perf_counter()
        # Rollout: the engine reads its weights and writes its cache.
        for i, block in enumerate(kv):
            block.copy_(weights[i % len(weights)]).mul_(0.5)
        torch.cuda.synchronize()
        for tag in ("kv_cache", "weights"):
            t = time.perf_counter()
            way.pause(tag)
            times[f"pause_{tag}"].append(time.perf_counter() - t)
        free_while_paused.append(torch.cuda.mem_get_info()[0])
        # Training: more than fits beside the engine.
        step = tensors(trainer_bytes, 7)
        total_step = sum(float(t.sum()) for t in step)
        expected_step = sum((7 + i) * (CHUNK // 4) for i in range(len(step)))
        if total_step != expected_step:
            fail(f"turn {turn}: the trainer's sum is {total_step}, not {expected_step}")
        del step
        torch.cuda.synchronize()
        way.after_trainer()
        for tag in ("weights", "kv_cache"):
            t = time.perf_counter()
            way.resume(tag)
            times[f"resume_{tag}"].append(time.perf_counter() - t)
        if checksum(weights) != expected:
            fail(f"turn {turn}: the weights changed across the pause")
        times["turn"].append(time.perf_counter() - start)
    result = {
        "program": "rl_turns",
        "way": way_name,
        "device": torch.cuda.get_device_name(),
        "turns": turns,
        "weights_gib": round(len(weights) * CHUNK / GIB, 2),
        "kv_cache_gib": round(len(kv) * CHUNK / GIB, 2),
        "trainer_gib": round(trainer_bytes // CHUNK * CHUNK / GIB, 2),
        "free_gib_at_start": round(free0 / GIB, 2),
        "free_gib_while_paused": round(min(free_while_paused) / GIB, 2),
    }
    for key, values in times.items():
        result[f"{key}_s"] = round(statistics.median(values), 4)
        result[f"{key}_first_s"] = round(values[0], 4)
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
