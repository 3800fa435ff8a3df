# SPDX-License-Identifier: Apache-2.0
"""A CuPy workload of many temporaries: matrix products, FFTs, sorts and reductions, 40 steps.
usage: cupy_mix.py WAY   (own: CuPy's memory pool; off/shim: cupy.cuda.set_allocator(None), every
array a cudaMalloc)"""
import harness

harness.require("cupy_mix", "cupy")

import cupy  # noqa: E402 (after the check: without CuPy or a GPU the run is skipped)

if harness.way() != "own":
    cupy.cuda.set_allocator(None)
pool = cupy.get_default_memory_pool()
random = cupy.random.RandomState(0)
state = {"checksum": 0.0, "pool_peak": 0}


def step(i):
    n = 1024 + 256 * (i % 4)
    a = random.standard_normal((n, n), dtype=cupy.float32)
    b = a @ a.T
    spectrum = cupy.abs(cupy.fft.fft(b[:, : n // 2], axis=1))
    ordered = cupy.sort(b.ravel())
    value = float(spectrum.sum() / n + ordered[-8:].sum() + cupy.tanh(b).mean())
    state["checksum"] = state["checksum"] * 0.5 + value
    state["pool_peak"] = max(state["pool_peak"], pool.total_bytes())


with harness.DeviceMemorySampler() as sampled:
    times = harness.time_steps(step, 5, 40, cupy.cuda.Device().synchronize)
harness.report("cupy_mix", harness.way(), times, f"{state['checksum']:.8e}",
               framework_peak_reserved=state["pool_peak"], sampled_peak=sampled.footprint)
