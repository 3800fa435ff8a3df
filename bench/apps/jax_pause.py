# SPDX-License-Identifier: Apache-2.0
"""Pausing a JAX program from outside it: XLA allocates through cudaMallocAsync
(XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async) under rmm-run, and rmm-ctl pauses and resumes it.

usage:
  jax_pause.py scenario [GIB]   run without the shim (it starts the others): a JAX program holding
                                GIB (default 4) of weights under rmm-run is paused and resumed with
                                rmm-ctl between two training steps; its weights and its steps are
                                checked against those before the pause and against a run never
                                paused
  jax_pause.py worker GIB       the JAX program (started by the scenario)

The tools are taken from RMM_RUN and RMM_CTL (default: build-gpu/tools). Prints one `RESULT {...}`
line; exits 1 when a check fails."""
import hashlib
import json
import os
import sys

from torch_pause import ctl, fail, finish_child, process_mib, start_under_shim

WIDTH = 8192  # a WIDTH x WIDTH float32 layer is 256 MiB


def worker(gib):
    import harness
    harness.require("jax_pause", "jax")
    import jax
    import jax.numpy as jnp
    import numpy as np

    layers = 4 * gib
    keys = jax.random.split(jax.random.PRNGKey(0), layers + 1)
    weights = [jax.random.normal(k, (WIDTH, WIDTH), dtype=jnp.float32) / WIDTH ** 0.5 for k in keys[:-1]]
    inputs = jax.random.normal(keys[-1], (256, WIDTH), dtype=jnp.float32)

    @jax.jit
    def step(ws, x):
        def loss(ws):
            y = x
            for w in ws:
                y = jnp.tanh(y @ w)
            return jnp.mean(y * y)
        value, grads = jax.value_and_grad(loss)(ws)
        return value, [w - 0.1 * g for w, g in zip(ws, grads)]

    def digest(arrays):
        h = hashlib.sha256()
        for a in arrays:
            h.update(np.asarray(a).tobytes())
        return h.hexdigest()

    losses = []
    value, weights = step(weights, inputs)
    losses.append(float(value))
    before = digest(weights)
    print(f"READY {os.getpid()} layers={layers}", flush=True)
    sys.stdin.readline()  # paused and resumed meanwhile
    after = digest(weights)
    for _ in range(2):
        value, weights = step(weights, inputs)
        losses.append(float(value))
    print("RESULT " + json.dumps({"weights_same": before == after, "losses": [repr(v) for v in losses]}),
          flush=True)


def start_worker(gib):
    env = dict(os.environ, XLA_PYTHON_CLIENT_ALLOCATOR="cuda_async")
    p, pid, _ = start_under_shim(__file__, ["worker", str(gib)], env, "JAX program")
    return p, pid


def finish_worker(p):
    return finish_child(p, "JAX program")


def scenario(gib):
    checks = {}
    reference, _ = start_worker(gib)
    unpaused = finish_worker(reference)

    worker_process, pid = start_worker(gib)
    held, _ = process_mib(pid)
    status, paused_message, pause_s = ctl(str(pid), "pause")
    checks["pause succeeds"] = status == 0
    paused, _ = process_mib(pid)
    status, _, resume_s = ctl(str(pid), "resume")
    checks["resume succeeds"] = status == 0
    resumed, _ = process_mib(pid)
    result = finish_worker(worker_process)
    checks["weights as before the pause"] = result["weights_same"]
    checks["losses as never paused"] = result["losses"] == unpaused["losses"]
    checks["the pause gave memory back"] = held is None or paused is None or held - paused >= gib * 1024 // 2
    print("RESULT " + json.dumps({
        "role": "scenario", "gib": gib, "pause_s": pause_s, "resume_s": resume_s,
        "process_mib": {"held": held, "paused": paused, "resumed": resumed}, "pause_message": paused_message.strip(),
        "losses": result["losses"], "checks": checks}), flush=True)
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        fail(", ".join(failed))


if __name__ == "__main__":
    role = sys.argv[1] if len(sys.argv) > 1 else "scenario"
    if role == "worker":
        worker(int(sys.argv[2]))
    elif role == "scenario":
        scenario(int(sys.argv[2]) if len(sys.argv) > 2 else 4)
    else:
        sys.exit(__doc__)
