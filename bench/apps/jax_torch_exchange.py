# SPDX-License-Identifier: Apache-2.0
"""JAX and PyTorch in one process: a training step of a small MLP in each, with the activations
handed from PyTorch to JAX and the result back through DLPack, 30 timed steps. Under the shim
(PyTorch's cache off, XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async) both frameworks allocate from the one
stack of the device; the result line says how many allocations the shim served while each framework
ran its part of one more step after the timed ones.
usage: jax_torch_exchange.py WAY   (own: both frameworks' own allocators; shim; set by run-gpu-apps.sh)"""
import ctypes
import json
import os
import tempfile

import harness

harness.require("jax_torch_exchange", "jax", "torch")

import jax  # noqa: E402 (after the check: without the frameworks or a GPU the run is skipped)
import jax.numpy as jnp  # noqa: E402
import torch  # noqa: E402

torch.manual_seed(0)
device = torch.device("cuda")
torch_model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 1024)).to(device)
optimizer = torch.optim.SGD(torch_model.parameters(), lr=0.01)
inputs = torch.randn(512, 1024, device=device)

key = jax.random.PRNGKey(0)
jax_params = [jax.random.normal(k, shape) / jnp.sqrt(shape[0])
              for k, shape in zip(jax.random.split(key, 2), [(1024, 2048), (2048, 10)])]
labels = jax.nn.one_hot(jnp.arange(512) % 10, 10)


def jax_loss(params, x, y):
    hidden = jax.nn.relu(x @ params[0])
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(hidden @ params[1]) * y, axis=-1))


@jax.jit
def jax_step(params, x, y):
    loss, grads = jax.value_and_grad(jax_loss)(params, x, y)
    return [p - 0.01 * g for p, g in zip(params, grads)], loss


def served_allocations():
    """The shim's served allocations so far (its report, through its control function), or None
    without the shim."""
    try:
        print_report = ctypes.CDLL(None).rmm_shim_print_report
    except AttributeError:
        return None
    print_report.argtypes = [ctypes.c_char_p]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "report.json")
        if print_report(path.encode()) != 0:
            return None
        return sum(d["allocations"] for d in json.load(open(path))["devices"])


state = {"jax_params": jax_params, "loss": None}
served = {"torch": 0, "jax": 0}


def count(part, before):
    after = served_allocations()
    if before is not None and after is not None:
        served[part] += after - before


def torch_part():
    optimizer.zero_grad(set_to_none=True)
    activations = torch_model(inputs)
    activations.square().mean().backward()
    optimizer.step()
    torch.cuda.synchronize()
    return activations


def jax_part(activations):
    x = jax.dlpack.from_dlpack(activations.detach())  # PyTorch's memory, read by JAX
    state["jax_params"], state["loss"] = jax_step(state["jax_params"], x, labels)
    jax.block_until_ready(state["jax_params"])
    back = torch.from_dlpack(state["jax_params"][1])  # JAX's memory, read by PyTorch
    state["checksum"] = float(back.sum())


def step(_):
    jax_part(torch_part())


def counted_step():
    """One more step, untimed, with the shim's count read around each framework's part (reading
    it writes a report, which must not weigh on the timed steps)."""
    before = served_allocations()
    activations = torch_part()
    count("torch", before)
    before = served_allocations()
    jax_part(activations)
    count("jax", before)


def synchronize():
    torch.cuda.synchronize()
    jax.block_until_ready(state["jax_params"])


with harness.DeviceMemorySampler() as sampled:
    times = harness.time_steps(step, 5, 30, synchronize)
result = f"{float(state['loss']):.8e} {state['checksum']:.6e}"  # before the counted step, as without the shim
extra = {"sampled_peak": sampled.footprint, "framework_peak_reserved": torch.cuda.max_memory_reserved()}
if served_allocations() is not None:
    counted_step()
    extra.update(shim_served_torch=served["torch"], shim_served_jax=served["jax"])
harness.report("jax_torch_exchange", harness.way(), times, result, **extra)
