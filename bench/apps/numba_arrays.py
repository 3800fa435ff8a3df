# SPDX-License-Identifier: Apache-2.0
"""Numba CUDA kernels over device arrays created and dropped every step, 40 steps.
usage: numba_arrays.py WAY"""
import harness

harness.require("numba_arrays", "numpy", "numba")

import numpy as np  # noqa: E402 (after the check: without Numba or a GPU the run is skipped)
from numba import cuda  # noqa: E402


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


host = np.arange(1 << 20, dtype=np.float32)
state = {"checksum": 0.0}


def step(i):
    n = (1 << 18) * (1 + i % 4)
    x = cuda.to_device(host[:n])
    y = cuda.to_device(host[:n] * 0.5)
    out = cuda.device_array(n, dtype=np.float32)
    saxpy[(n + 255) // 256, 256](np.float32(i % 7), x, y, out)
    state["checksum"] = state["checksum"] * 0.5 + float(out[n - 1])
    del x, y, out


with harness.DeviceMemorySampler() as sampled:
    times = harness.time_steps(step, 5, 40, cuda.synchronize)
harness.report("numba_arrays", harness.way(), times, f"{state['checksum']:.8e}", sampled_peak=sampled.footprint)
