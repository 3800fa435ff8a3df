# SPDX-License-Identifier: Apache-2.0
"""ResNet-50 training steps with PyTorch: batch 32 of synthetic 224x224 images, fixed seed.
usage: torch_resnet50.py WAY   (own: PyTorch's caching allocator; off/shim: every tensor a
cudaMalloc, PYTORCH_NO_CUDA_MEMORY_CACHING=1, set by run-gpu-apps.sh)"""
import harness

harness.require("torch_resnet50", "torch", "torchvision")

import torch  # noqa: E402 (after the check: without PyTorch or a GPU the run is skipped)
import torchvision  # noqa: E402

# The footprint counts from here, the same point in every way: the CUDA context exists, nothing is
# allocated yet (not even the python way's pool).
sampled = harness.DeviceMemorySampler().start()
harness.torch_allocator_for_way()

torch.manual_seed(0)
torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = True
model = torchvision.models.resnet50(num_classes=1000).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
images = torch.randn(32, 3, 224, 224, device="cuda")
labels = torch.randint(0, 1000, (32,), device="cuda")


def loss_of_step(_):
    return torch.nn.functional.cross_entropy(model(images), labels)


harness.train_torch("pytorch_resnet50", loss_of_step, optimizer, 5, 20, sampled)
