# SPDX-License-Identifier: Apache-2.0
"""An RL loop's turn-taking on one GPU: a rollout engine and a trainer take turns, each paused while
the other runs.

usage:
  rl_turns.py shim [TURNS]   under rmm-run with PYTORCH_NO_CUDA_MEMORY_CACHING=1: the regions
                             through rmm.shim.region, paused and resumed with rmm.shim.pause/resume
  rl_turns.py tms [TURNS]    the same regions through torch_memory_saver (its PyTorch allocator
                             hook; kept regions backed up in host memory)
  rl_turns.py none [TURNS]   no pausing: both sides resident at once
  rl_turns.py table FILE     the table of the RESULT lines in FILE (one per run), and whether each
                             run's losses equal those of the run that never paused; exits 1 if not

The regions: "rollout" (the engine's weights, kept across a pause), "kv_cache" (its cache, dropped)
and "train" (the trainer's weights, gradients and Adam state, kept). A turn: the engine generates a
batch, reading its weights and writing its cache, while the trainer is paused; switch to training
(pause kv_cache and rollout, resume train); the trainer takes two Adam steps on the batch; switch
back (pause train, resume rollout and kv_cache). Sizes follow the device's free memory F at the
start, up to 78 GiB: the engine's weights 0.05 F and cache 0.30 F, the trainer's weights 0.03 F
(0.12 F with gradients and both moments). Every turn checks the engine's weights bit for bit after its resume.

Device memory in use is read from NVML (nvidia-ml-py; the driver's free memory without it) by a
thread every 2 ms. Prints one `RESULT {...}` line: per pause and resume the median and the first of
the turns in seconds, the bytes each moved, the memory in use in each phase, and every loss."""
import contextlib
import json
import os
import statistics
import sys
import threading
import time

torch = None  # imported by main() for a run: the table needs no PyTorch

GIB = 1 << 30
WIDTH = 8192  # a layer of WIDTH x WIDTH floats is 256 MiB
BATCH = 256
GENERATION_STEPS = 4
TRAIN_STEPS = 2
BASIS_CAP = 78 * GIB


def fail(message):
    print(f"FAILED: {message}", flush=True)
    sys.exit(1)


class NoPausing:
    """Both sides resident all along: the memory they need at once, and the losses to match."""

    def region(self, tag, keep):
        return contextlib.nullcontext()

    def pause(self, tag):
        pass

    def resume(self, tag):
        pass

    def after_phase(self):
        pass


class ShimWay:
    """rmm.shim's regions and pauses (the process runs under rmm-run)."""

    def __init__(self):
        import rmm.shim

        if not rmm.shim.available():
            fail("not under the shim: run under rmm-run with PYTORCH_NO_CUDA_MEMORY_CACHING=1")
        self.shim = rmm.shim

    def region(self, tag, keep):
        # Autograd allocates gradients on a thread of its own: the region covers every thread.
        return self.shim.region(tag, keep=keep, all_threads=True)

    def pause(self, tag):
        self.shim.pause(tag)

    def resume(self, tag):
        self.shim.resume(tag)

    def after_phase(self):
        pass  # freed memory went back to the shim's pools, which a resume takes back from


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

    def after_phase(self):
        torch.cuda.empty_cache()  # PyTorch's cache holds the phase's temporaries otherwise


class MemoryWatch:
    """The device memory in use, sampled by a thread; phases read the peak since they began."""

    def __init__(self):
        try:
            import pynvml

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
            self.source = "NVML"
            self.used = lambda: pynvml.nvmlDeviceGetMemoryInfo(handle).used
        except Exception:  # nvidia-ml-py missing: the driver's view of the same
            self.source = "cuMemGetInfo"
            self.used = lambda: (lambda free, total: total - free)(*torch.cuda.mem_get_info())
        self.peak = self.used()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self):
        while not self.stopping.wait(0.002):
            used = self.used()
            with self.lock:
                self.peak = max(self.peak, used)

    def take_peak(self):
        """The peak since the last call, and a new period begun at what is in use now."""
        used = self.used()
        with self.lock:
            peak, self.peak = max(self.peak, used), used
        return peak

    def stop(self):
        self.stopping.set()
        self.thread.join()


def layers(count, seed):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return [torch.randn(WIDTH, WIDTH, device="cuda", generator=generator) / WIDTH**0.5 for _ in range(count)]


def rollout(weights, cache, prompt):
    """Generates a batch: each step runs the weights and writes its share of the cache, then reads it."""
    x = prompt
    for step in range(GENERATION_STEPS):
        h = x
        for w in weights:
            h = torch.tanh(h @ w)
        mine = cache[step::GENERATION_STEPS]
        for block in mine:
            block.view(-1, BATCH, WIDTH).copy_(h.expand(block.numel() // (BATCH * WIDTH), BATCH, WIDTH))
        x = h + 0.5 * torch.stack([block.view(-1, BATCH, WIDTH)[-1] for block in mine]).mean(0)
    return x


def train(params, optimizer, batch):
    losses = []
    target = torch.tanh(batch.roll(1, dims=1))
    for _ in range(TRAIN_STEPS):
        h = batch
        for w in params:
            h = torch.tanh(h @ w)
        loss = torch.nn.functional.mse_loss(h, target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss))
    return losses


def checksum(ts):
    return [float(t.double().sum()) for t in ts]


def run(way_name, turns):
    way = {"shim": ShimWay, "tms": TmsWay, "none": NoPausing}[way_name]()
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.init()
    free0, _ = torch.cuda.mem_get_info()
    basis = min(free0, BASIS_CAP)  # the same bytes on every card of 80 GB or more
    layer_bytes = WIDTH * WIDTH * 4
    engine_layers = max(1, int(0.05 * basis) // layer_bytes)
    cache_blocks = max(GENERATION_STEPS, int(0.30 * basis) // layer_bytes)
    trainer_layers = max(1, int(0.03 * basis) // layer_bytes)
    watch = MemoryWatch()
    base_used = watch.used()

    with way.region("rollout", keep=True):
        engine = layers(engine_layers, seed=1)
    with way.region("kv_cache", keep=False):
        cache = [torch.empty(WIDTH * WIDTH, device="cuda") for _ in range(cache_blocks)]
    with way.region("train", keep=True):
        params = [w.requires_grad_() for w in layers(trainer_layers, seed=2)]
        optimizer = torch.optim.Adam(params, lr=1e-3)
        # Adam's moments are made at the first step: take one on nothing, so they exist from the start.
        for p in params:
            p.grad = torch.zeros_like(p)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    prompt = torch.randn(BATCH, WIDTH, device="cuda", generator=torch.Generator(device="cuda").manual_seed(3))
    torch.cuda.synchronize()
    engine_sum = checksum(engine)
    way.pause("train")
    watch.take_peak()

    to_train = (
        ("pause_kv_cache", way.pause, "kv_cache"),
        ("pause_rollout", way.pause, "rollout"),
        ("resume_train", way.resume, "train"),
    )
    to_rollout = (
        ("pause_train", way.pause, "train"),
        ("resume_rollout", way.resume, "rollout"),
        ("resume_kv_cache", way.resume, "kv_cache"),
    )
    times = {op: [] for op, _, _ in to_train + to_rollout} | {"to_train": [], "to_rollout": [], "turn": []}
    rollout_peaks, train_peaks, losses = [], [], []

    def timed(op, action, tag):
        torch.cuda.synchronize()
        t = time.perf_counter()
        action(tag)
        times[op].append(time.perf_counter() - t)

    def switch(name, steps):
        t = time.perf_counter()
        for op, action, tag in steps:
            timed(op, action, tag)
        times[name].append(time.perf_counter() - t)

    def end_phase(peaks):
        torch.cuda.synchronize()
        way.after_phase()
        peaks.append(watch.take_peak())

    for turn in range(turns):
        start = time.perf_counter()
        batch = rollout(engine, cache, prompt).detach()
        end_phase(rollout_peaks)
        switch("to_train", to_train)
        with way.region("train", keep=True):
            losses += train(params, optimizer, batch)
        end_phase(train_peaks)
        switch("to_rollout", to_rollout)
        if checksum(engine) != engine_sum:
            fail(f"turn {turn}: the rollout engine's weights changed across the pause")
        times["turn"].append(time.perf_counter() - start)
    watch.stop()

    gib = lambda n: round(n / GIB, 2)  # noqa: E731
    result = {
        "program": "rl_turns",
        "way": way_name,
        "device": torch.cuda.get_device_name(),
        "turns": turns,
        "memory_source": watch.source,
        "free_gib_at_start": gib(free0),
        "rollout_gib": gib(engine_layers * layer_bytes),
        "kv_cache_gib": gib(cache_blocks * layer_bytes),
        "train_gib": gib(3 * trainer_layers * layer_bytes),  # weights and both moments
        "used_gib_before": gib(base_used),
        "peak_used_gib_rollout_phase": gib(max(rollout_peaks)),
        "peak_used_gib_train_phase": gib(max(train_peaks)),
        "losses": losses,
    }
    for key, values in times.items():
        result[f"{key}_s"] = round(statistics.median(values), 4)
        result[f"{key}_first_s"] = round(values[0], 4)
    print("RESULT " + json.dumps(result), flush=True)


def table(path):
    runs = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("RESULT "):
                line = line[len("RESULT ") :]
            if line:
                r = json.loads(line)
                runs[r["way"]] = r
    if "none" not in runs:
        fail(f"{path} has no run that never paused (way none)")
    ways = [w for w in ("shim", "tms", "none") if w in runs]
    first = runs[ways[0]]
    has_ratio = {"shim", "tms"} <= runs.keys()
    print(
        f"{first['device']}, {first['turns']} turns; rollout weights {first['rollout_gib']} GiB (kept), KV cache "
        f"{first['kv_cache_gib']} GiB (dropped), trainer {first['train_gib']} GiB (kept: weights and Adam's "
        f"moments); seconds, median of the turns (first turn in brackets); memory in use from {first['memory_source']}\n"
    )
    print("| | " + " | ".join(ways) + (" | shim / tms |" if has_ratio else " |"))
    print("| --- " * (len(ways) + 1 + has_ratio) + "|")
    rows = [
        ("pause_kv_cache", "pause KV cache (dropped)"),
        ("pause_rollout", "pause rollout weights (kept)"),
        ("resume_train", "resume trainer"),
        ("to_train", "switch to training (the three above)"),
        ("pause_train", "pause trainer (kept)"),
        ("resume_rollout", "resume rollout weights"),
        ("resume_kv_cache", "resume KV cache"),
        ("to_rollout", "switch to rollout (the three above)"),
        ("turn", "whole turn"),
    ]
    for key, label in rows:
        cells = [f"{runs[w][key + '_s']:.3f} ({runs[w][key + '_first_s']:.3f})" for w in ways]
        ratio = ""
        if has_ratio:
            tms = runs["tms"][key + "_s"]
            ratio = f" | {runs['shim'][key + '_s'] / tms:.2f}" if tms > 0 else " | -"
        print(f"| {label} | " + " | ".join(cells) + ratio + " |")
    for key, label in (
        ("used_gib_before", "in use before the regions (context), GiB"),
        ("peak_used_gib_rollout_phase", "peak in use, rollout phases, GiB"),
        ("peak_used_gib_train_phase", "peak in use, training phases, GiB"),
    ):
        print(f"| {label} | " + " | ".join(str(runs[w][key]) for w in ways) + (" | |" if has_ratio else " |"))
    reference = runs["none"]["losses"]
    equal = {w: runs[w]["losses"] == reference for w in ways}
    print("\nlosses equal to the run that never paused: " + ", ".join(f"{w} {'yes' if equal[w] else 'NO'}" for w in ways))
    if not all(equal.values()):
        sys.exit(1)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "table":
        table(sys.argv[2])
        return
    way_name = sys.argv[1] if len(sys.argv) > 1 else "shim"
    if way_name not in ("shim", "tms", "none"):
        fail(f"unknown way {way_name!r}: shim, tms, none or table FILE")
    global torch
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS, for equal losses
    import torch
    run(way_name, int(sys.argv[2]) if len(sys.argv) > 2 else 10)


if __name__ == "__main__":
    main()
