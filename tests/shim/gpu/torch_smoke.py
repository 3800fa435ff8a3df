# SPDX-License-Identifier: Apache-2.0
"""A few training steps of a small convolutional network with PyTorch's caching allocator off
(every tensor is a cudaMalloc / cudaFree). Prints the loss after each step with full precision, so
a run under the preload shim can be compared with a run without it. Deterministic settings."""
import os
import sys

os.environ.setdefault("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False

model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
    torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
    torch.nn.AvgPool2d(16), torch.nn.Flatten(),
    torch.nn.Linear(64 * 16, 10),
).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
inputs = torch.randn(64, 3, 64, 64, device="cuda")
labels = torch.randint(0, 10, (64,), device="cuda")
for step in range(int(sys.argv[1]) if len(sys.argv) > 1 else 8):
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()
    print(f"loss{step}={loss.item():.10e}")
torch.cuda.synchronize()
