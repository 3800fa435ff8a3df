# SPDX-License-Identifier: Apache-2.0
"""A training step captured whole in a torch.cuda.CUDAGraph (PyTorch's caching allocator on: its
graph pool's segments are cudaMalloc calls the shim serves), with everything allocated inside the
region "train". Replays the graph 6 times and prints each loss with full precision; with `pause`,
the tag is paused (contents kept) and resumed after the third replay, and the free device memory
before and during the pause is printed. Run under the shim."""
import ctypes
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

shim = ctypes.CDLL(None)
for name in ("rmm_shim_region_begin", "rmm_shim_pause_tag"):
    getattr(shim, name).argtypes = [ctypes.c_char_p, ctypes.c_uint]
shim.rmm_shim_resume_tag.argtypes = [ctypes.c_char_p]
shim.rmm_shim_last_message.restype = ctypes.c_char_p


def call(what, rc):
    print(f"{what}={rc}")
    print(f"{what}_message={shim.rmm_shim_last_message().decode()}")
    if rc != 0:
        sys.exit(1)


torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
call("region_begin", shim.rmm_shim_region_begin(b"train", 0))
model = torch.nn.Sequential(
    torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
static_input = torch.randn(512, 2048, device="cuda")
static_target = torch.randint(0, 10, (512,), device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):  # warm-up outside the graph, as PyTorch asks
    for _ in range(3):
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(static_input), static_target).backward()
        optimizer.step()
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
optimizer.zero_grad(set_to_none=True)
with torch.cuda.graph(graph):
    static_loss = torch.nn.functional.cross_entropy(model(static_input), static_target)
    static_loss.backward()
    optimizer.step()
call("region_end", shim.rmm_shim_region_end())

for replay in range(6):
    if replay == 3 and sys.argv[1:] == ["pause"]:
        torch.cuda.synchronize()
        free_before = torch.cuda.mem_get_info()[0]
        call("pause", shim.rmm_shim_pause_tag(b"train", 0))
        print(f"freed_by_pause={torch.cuda.mem_get_info()[0] - free_before}")
        call("resume", shim.rmm_shim_resume_tag(b"train"))
    graph.replay()
    print(f"loss{replay}={static_loss.item():.10e}")
torch.cuda.synchronize()
