# SPDX-License-Identifier: Apache-2.0
"""A jitted training loop of a small decoder-only transformer in JAX (4 layers, width 512, 8 heads)
on random tokens, with the batch shape changing every step (four shapes of batch x sequence
length), 40 timed steps.
usage: jax_transformer.py WAY   (the ways of jax_mlp.py; set by run-gpu-apps.sh)"""
import harness

harness.require("jax_transformer", "jax")

import jax  # noqa: E402 (after the check: without JAX or a GPU the run is skipped)
import jax.numpy as jnp  # noqa: E402

VOCAB, WIDTH, HEADS, LAYERS = 8192, 512, 8, 4
SHAPES = [(32, 128), (16, 256), (24, 192), (64, 64)]  # (batch, sequence length), in turn


def init(key):
    keys = iter(jax.random.split(key, 2 + 4 * LAYERS))

    def dense(m, n):
        return jax.random.normal(next(keys), (m, n)) / jnp.sqrt(m)

    layers = [{"qkv": dense(WIDTH, 3 * WIDTH), "out": dense(WIDTH, WIDTH), "up": dense(WIDTH, 4 * WIDTH),
               "down": dense(4 * WIDTH, WIDTH), "ln1": jnp.ones(WIDTH), "ln2": jnp.ones(WIDTH)}
              for _ in range(LAYERS)]
    return {"embed": jax.random.normal(next(keys), (VOCAB, WIDTH)) * 0.02, "layers": layers,
            "head": dense(WIDTH, VOCAB)}


def norm(x, scale):
    return scale * (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)


def attention(x, layer):
    b, t, _ = x.shape
    q, k, v = jnp.split(x @ layer["qkv"], 3, axis=-1)
    q, k, v = (a.reshape(b, t, HEADS, WIDTH // HEADS).transpose(0, 2, 1, 3) for a in (q, k, v))
    scores = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(WIDTH // HEADS)
    scores = jnp.where(jnp.tril(jnp.ones((t, t), bool)), scores, -1e9)
    y = jax.nn.softmax(scores, axis=-1) @ v
    return y.transpose(0, 2, 1, 3).reshape(b, t, WIDTH) @ layer["out"]


def loss_fn(params, tokens):
    x = params["embed"][tokens[:, :-1]]
    for layer in params["layers"]:
        x = x + attention(norm(x, layer["ln1"]), layer)
        x = x + jax.nn.gelu(norm(x, layer["ln2"]) @ layer["up"]) @ layer["down"]
    logits = x @ params["head"]
    targets = jax.nn.one_hot(tokens[:, 1:], VOCAB)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * targets, axis=-1))


@jax.jit
def train_step(params, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    return jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads), loss


key = jax.random.PRNGKey(0)
state = {"params": init(key), "loss": None}
batches = [jax.random.randint(jax.random.fold_in(key, i), (b, t + 1), 0, VOCAB) for i, (b, t) in enumerate(SHAPES)]


def step(i):
    state["params"], state["loss"] = train_step(state["params"], batches[i % len(batches)])


def synchronize():
    jax.block_until_ready(state["params"])


with harness.DeviceMemorySampler() as sampled:
    times = harness.time_steps(step, 2 * len(SHAPES), 40, synchronize)
stats = jax.devices()[0].memory_stats() or {}
harness.report("jax_transformer", harness.way(), times, f"{float(state['loss']):.8e}",
               framework_peak_reserved=stats.get("peak_bytes_in_use", 0), sampled_peak=sampled.footprint)
