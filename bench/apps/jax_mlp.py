# SPDX-License-Identifier: Apache-2.0
"""A jitted training loop of a small MLP in JAX (4 layers of 4096, batch 2048), 30 steps.
usage: jax_mlp.py WAY   (own: XLA's BFC allocator, preallocating 75% of the device; own_growing:
XLA_PYTHON_CLIENT_PREALLOCATE=false; off/shim: XLA_PYTHON_CLIENT_ALLOCATOR=platform; set by
run-gpu-apps.sh)"""
import harness

harness.require("jax_mlp", "jax")

import jax  # noqa: E402 (after the check: without JAX or a GPU the run is skipped)
import jax.numpy as jnp  # noqa: E402

key = jax.random.PRNGKey(0)
sizes = [1024, 4096, 4096, 4096, 10]
keys = jax.random.split(key, len(sizes))
params = [(jax.random.normal(k, (m, n)) / jnp.sqrt(m), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]
inputs = jax.random.normal(keys[-1], (2048, sizes[0]))
targets = jax.nn.one_hot(jnp.arange(2048) % 10, 10)


def loss_fn(p, x, y):
    for w, b in p[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = p[-1]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(x @ w + b) * y, axis=-1))


@jax.jit
def train_step(p, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, grads)], loss


state = {"params": params, "loss": None}


def step(_):
    state["params"], state["loss"] = train_step(state["params"], inputs, targets)


def synchronize():
    jax.block_until_ready(state["params"])


with harness.DeviceMemorySampler() as sampled:
    times = harness.time_steps(step, 5, 30, synchronize)
stats = jax.devices()[0].memory_stats() or {}
harness.report("jax_mlp", harness.way(), times, f"{float(state['loss']):.8e}",
               framework_peak_reserved=stats.get("peak_bytes_in_use", 0), sampled_peak=sampled.footprint)
