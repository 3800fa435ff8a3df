# SPDX-License-Identifier: Apache-2.0
"""What every application driver in bench/apps shares: timing steps, sampling the device's used
memory, printing one result line.

Each driver runs a fixed number of warm-up steps, then timed steps, and prints

    RESULT {"program": ..., "way": ..., "step_ms": median, "result": ..., ...}

for scripts/run-gpu-apps.sh to collect. The device's used memory is sampled through NVML every
millisecond on a thread of its own; its peak, minus what was used once the CUDA context existed and
before the program allocated anything, is the program's footprint as the device sees it."""
import ctypes
import importlib.util
import json
import os
import statistics
import sys
import threading
import time

SKIPPED = 77  # the exit status of a driver that cannot run here (the convention of test harnesses)


def require(program, *modules):
    """Ends the driver with status SKIPPED and a `SKIP program: reason` line when there is no CUDA
    device or a module it needs is not installed: the run is skipped, saying why, not failed."""
    reason = _missing_device()
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if reason is None and missing:
        reason = f"{', '.join(missing)} not installed"
    if reason is not None:
        print(f"SKIP {program}: {reason}", flush=True)
        sys.exit(SKIPPED)


def _missing_device():
    """Why no CUDA device can be used here, or None."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "no CUDA driver (libcuda.so.1 not found)"
    count = ctypes.c_int(0)
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "no CUDA device"
    return None


class DeviceMemorySampler:
    """Peak of the device's used memory while running, above what was used at start. The start is
    taken once the device's CUDA context exists (made then if the program has not made it yet), so
    that what the context itself takes is no part of the footprint; a driver starts the sampler
    before its first allocation, so that every way counts its model, data and pools alike."""

    def __init__(self, device=0, period_s=0.001):
        self.peak = 0
        self.base = 0
        self._device = device
        self._stop = threading.Event()
        self._thread = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(device)
            self._nvml = pynvml
        except Exception:  # no NVML: no sampled figure, the driver says so
            self._nvml = None
        self._period = period_s

    def used(self):
        return self._nvml.nvmlDeviceGetMemoryInfo(self._handle).used if self._nvml else 0

    def start(self):
        if self._nvml:
            _retain_primary_context(self._device)
        self.base = self.used()
        self.peak = self.base
        if self._nvml:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.used())
            time.sleep(self._period)

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
        self.peak = max(self.peak, self.used())

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def footprint(self):
        return self.peak - self.base


def _retain_primary_context(device):
    """Makes the device's primary context, the one the CUDA runtime and the frameworks share, where
    there is none yet; nothing of the program's is allocated in it."""
    driver = ctypes.CDLL("libcuda.so.1")
    ordinal, context = ctypes.c_int(0), ctypes.c_void_p()
    if driver.cuInit(0) == 0 and driver.cuDeviceGet(ctypes.byref(ordinal), device) == 0:
        driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), ordinal)


def time_steps(step, warmup, steps, synchronize):
    """Runs `warmup` untimed steps, then `steps` timed ones; returns the step times in ms."""
    for i in range(warmup):
        step(i)
    synchronize()
    times = []
    for i in range(steps):
        start = time.perf_counter()
        step(warmup + i)
        synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def report(program, way, times, result, **extra):
    line = {
        "program": program,
        "way": way,
        "step_ms": statistics.median(times),
        "step_ms_min": min(times),
        "steps": len(times),
        "result": result,
        "shim": os.environ.get("LD_PRELOAD", "").find("librmm_shim") >= 0,
    }
    line.update(extra)
    print("RESULT " + json.dumps(line), flush=True)


def way():
    """The way the program runs, as run-gpu-apps.sh names it (argv[1])."""
    return sys.argv[1] if len(sys.argv) > 1 else "own"


_rmm_pool = None


def torch_allocator_for_way():
    """Way `python`: PyTorch allocates through the rmm package's allocator (rmm.allocators.torch)
    from a pool like the shim's built-in stack (32 MiB, growing). Call before the first tensor."""
    global _rmm_pool
    if way() != "python":
        return
    import rmm
    import torch
    from rmm.allocators.torch import rmm_torch_allocator

    _rmm_pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), initial_pool_size="32MiB")
    rmm.mr.set_current_device_resource(_rmm_pool)
    torch.cuda.memory.change_current_allocator(rmm_torch_allocator)


def train_torch(program, loss_of_step, optimizer, warmup, steps, sampled):
    """Times `steps` PyTorch training steps after `warmup` untimed ones, each the loss of
    `loss_of_step(i)` (its forward pass) backward and an `optimizer` step, stops `sampled` (a started
    DeviceMemorySampler) and reports the last loss with the allocator's and the device's peaks."""
    import torch

    last = {}

    def step(i):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of_step(i)
        loss.backward()
        optimizer.step()
        last["loss"] = loss

    times = time_steps(step, warmup, steps, torch.cuda.synchronize)
    sampled.stop()
    report(program, way(), times, f"{last['loss'].item():.8e}", **torch_peaks(), sampled_peak=sampled.footprint)


def torch_peaks():
    """The allocator's peak figures: PyTorch's own, or the rmm pool's under way `python`."""
    import torch

    if _rmm_pool is not None:
        return {"framework_peak_reserved": _rmm_pool.pool_statistics()["peak_reserved_bytes"]}
    return {
        "framework_peak_reserved": torch.cuda.max_memory_reserved(),
        "framework_peak_allocated": torch.cuda.max_memory_allocated(),
    }
