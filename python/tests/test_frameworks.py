# SPDX-License-Identifier: Apache-2.0
"""CuPy, Numba and PyTorch through rmm's allocators, each in a process of its own (a framework's
allocator is chosen once per process). Each computes the same result as with its own allocator.
Skipped where the framework or a GPU is missing (the emulator runs no kernels)."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import SEED_ALLOCATION_COUNTS


def run(*parts: str, path: str = "", **env: str) -> dict:
    """Runs the program made of `parts` (each dedented on its own) in a fresh interpreter, `path`
    first on its module path; the program prints one JSON object, which is returned."""
    code = "\n".join(textwrap.dedent(part).strip("\n") for part in parts) + "\n"
    environment = {**os.environ, **env}
    if path:
        environment["PYTHONPATH"] = path + os.pathsep + environment.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


# Numba may need an older NumPy than the one installed: RMM_TEST_NUMBA_PATH names a folder with
# one, put first on the path of Numba's processes only.
NUMBA_PATH = os.environ.get("RMM_TEST_NUMBA_PATH", "")


def needs(module: str):
    """Skips unless `module` is installed (looked up, not imported) and a GPU runs kernels."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    if os.environ.get("RMM_EXPECTED_BACKEND") == "emulator":
        pytest.skip(f"{module} launches kernels, which the CPU emulator cannot run")


CUPY_WORK = """
    import cupy, json
    x = cupy.arange(1 << 20, dtype=cupy.float32).reshape(1024, 1024) / (1 << 20)
    y = x @ x.T
    f = cupy.fft.fft(y[0]).real
    value = float(y.sum() + cupy.sort(f)[:10].sum())
"""


def test_cupy_through_rmm_gives_cupys_result():
    needs("cupy")
    own = run(CUPY_WORK, "print(json.dumps({'value': value}))")
    through_rmm = run(
        """
        import rmm
        from rmm.allocators.cupy import rmm_cupy_allocator
        import cupy
        rmm.reinitialize(pool_allocator=True, initial_pool_size="256MiB")
        rmm.statistics.enable_statistics()
        cupy.cuda.set_allocator(rmm_cupy_allocator)
        assert cupy.cuda.memory.alloc(0).ptr == 0  # a null pointer still names its device
        """,
        CUPY_WORK,
        "print(json.dumps({'value': value, 'count': rmm.statistics.get_statistics().total_count}))",
    )
    assert through_rmm["value"] == own["value"]
    assert through_rmm["count"] > 5


NUMBA_WORK = """
    import json
    import numpy as np
    from numba import cuda

    @cuda.jit
    def scale(a, factor):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= factor

    total = 0.0
    for step in range(20):
        d = cuda.to_device(np.arange(10000, dtype=np.float64))
        scale[40, 256](d, step)
        total += float(d.copy_to_host().sum())
"""


def test_numba_through_the_environment_variable_gives_numbas_result():
    needs("numba")
    own = run(NUMBA_WORK, "print(json.dumps({'total': total}))", path=NUMBA_PATH)
    through_rmm = run(
        "import rmm\nrmm.statistics.enable_statistics()",
        NUMBA_WORK,
        "print(json.dumps({'total': total, 'count': rmm.statistics.get_statistics().total_count,"
        " 'manager': type(cuda.current_context().memory_manager).__name__}))",
        path=NUMBA_PATH,
        NUMBA_CUDA_MEMORY_MANAGER="rmm.allocators.numba",
    )
    assert through_rmm["total"] == own["total"]
    assert through_rmm["manager"] == "RMMNumbaManager" and through_rmm["count"] >= 20


def test_numba_through_set_memory_manager():
    needs("numba")
    through_rmm = run(
        """
        import json, rmm
        import numpy as np
        from numba import cuda
        from rmm.allocators.numba import RMMNumbaManager
        cuda.set_memory_manager(RMMNumbaManager)
        rmm.statistics.enable_statistics()
        d = cuda.to_device(np.arange(1000, dtype="float32"))
        window = d[10:13].copy_to_host().tolist()  # a view: pointer arithmetic on rmm's pointer
        print(json.dumps({'bytes': rmm.statistics.get_statistics().current_bytes, 'window': window}))
        """,
        path=NUMBA_PATH,
    )
    assert through_rmm == {"bytes": 4000, "window": [10.0, 11.0, 12.0]}


TORCH_WORK = """
    import json, torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data, target = torch.randn(64, 256, device="cuda"), torch.randint(0, 10, (64,), device="cuda")
    for _ in range(10):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(data), target)
        loss.backward()
        opt.step()
    value = loss.item()
"""


def test_pytorch_through_a_shared_pool_gives_pytorchs_result():
    needs("torch")
    own = run(TORCH_WORK, "print(json.dumps({'loss': value}))")
    through_rmm = run(
        """
        import rmm
        from rmm.allocators.torch import rmm_torch_allocator
        import torch
        rmm.reinitialize(pool_allocator=True, initial_pool_size="256MiB")
        rmm.statistics.enable_statistics()
        torch.cuda.memory.change_current_allocator(rmm_torch_allocator)
        """,
        TORCH_WORK,
        "print(json.dumps({'loss': value, 'count': rmm.statistics.get_statistics().total_count}))",
    )
    assert through_rmm["loss"] == pytest.approx(own["loss"], rel=1e-5)
    assert through_rmm["count"] > 10


def test_the_seed_example_of_pytorch_statistics():
    needs("torch")
    counts = run(
        """
        import json, rmm, torch
        from rmm.allocators.torch import rmm_torch_allocator
        torch.cuda.change_current_allocator(rmm_torch_allocator)
        mr = rmm.mr.StatisticsResourceAdaptor(rmm.mr.ManagedMemoryResource())
        rmm.mr.set_current_device_resource(mr)
        x = torch.tensor([1, 2]).cuda()
        print(json.dumps(mr.allocation_counts))
        """
    )
    assert counts == SEED_ALLOCATION_COUNTS
